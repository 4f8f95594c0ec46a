package device

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// queueState is what the shared submission path needs of one kernel queue
// (a libaio context or an io_uring ring). Both backends embed it.
//
// Ownership: mu guards the queue's submission side (iocb scratch or SQ).
// While the queue's reaping goroutine runs completion functions it is
// locked to its OS thread (beginDelivery to endDelivery): reaperTid is that
// thread, 0 at other times, and delivering is true. deferredN, the requests
// deferred since the reaper last sent them, and delivering are read and
// written only by the reaper (a completion function runs on it). A Submit
// from a completion function (tid == reaperTid and delivering) goes to this
// queue and is deferred: the reaper hands the requests to the kernel every
// reapSubmitLimit of them and after its batch.
type queueState struct {
	mu         sync.Mutex
	reaperTid  atomic.Int32
	delivering bool
	deferredN  int
}

func (q *queueState) state() *queueState { return q }

// beginDelivery starts a batch of completion functions: the reaper is
// locked to its thread and publishes it, so that ownQueue recognises a
// Submit made from one of them.
func (q *queueState) beginDelivery() {
	runtime.LockOSThread()
	q.reaperTid.Store(int32(unix.Gettid()))
	q.delivering = true
}

// endDelivery ends the batch. The reaper is not locked between batches: it
// waits for the next one parked in the netpoller (see doorbell), like any
// goroutine.
func (q *queueState) endDelivery() {
	q.delivering = false
	q.reaperTid.Store(0)
	runtime.UnlockOSThread()
}

// kernelQueue is a backend's queue type (*aioContext or *uringRing).
type kernelQueue interface {
	state() *queueState
}

// submitBatchFunc fills and (unless deferred) submits a prefix of reqs on q,
// whose lock the caller holds. first is a slot already acquired for reqs[0],
// which has passed check; it is used or released. It returns how many
// requests it accepted.
type submitBatchFunc[Q kernelQueue] func(q Q, reqs []Request, deferred bool, first uint32) (int, error)

// submitOnQueues is Submit for the file backends: requests are spread over
// the queues in batches, or all go to the caller's own queue, deferred, when
// the caller is a completion function on that queue's reaper.
//
// The caller has entered (core.enter) before it read queues, and leaves
// after this returns.
func submitOnQueues[Q kernelQueue](c *core, queues []Q, next *atomic.Uint32, reqs []Request, batch submitBatchFunc[Q]) (int, error) {
	own, fromReaper := ownQueue(queues)
	accepted := 0
	for accepted < len(reqs) {
		// The first slot of a batch is taken before any queue lock: waiting
		// on the throttle while holding one would stop that queue's reaper
		// (which takes the lock to send deferred submissions) from freeing
		// slots.
		if err := c.check(&reqs[accepted]); err != nil {
			return accepted, err
		}
		idx, ok := c.acquire(true)
		if !ok {
			return accepted, ErrClosed
		}
		q := own
		if fromReaper {
			q.state().mu.Lock()
		} else {
			q = pickQueue(queues, next)
		}
		n, err := batch(q, reqs[accepted:], fromReaper, idx)
		q.state().mu.Unlock()
		accepted += n
		if err != nil {
			return accepted, err
		}
	}
	return accepted, nil
}

// afterCompletion is called by q's reaper after each completion it
// delivered, group counting those delivered since the last group ended:
// after every limit of them, or once completion functions deferred limit
// requests, it calls Config.AfterGroup, hands the kernel what they deferred
// (send, the backend's sendDeferred) and starts a new group. The reaper
// still sends after its batch.
func afterCompletion[Q kernelQueue](c *core, q Q, group *int, limit int, send func(Q)) {
	*group++
	s := q.state()
	if *group < limit && s.deferredN < limit {
		return
	}
	c.afterGroup()
	if s.deferredN > 0 { // a store never defers: no lock for it
		send(q)
	}
	*group = 0
}

// ownQueue is the queue whose reaper is the calling goroutine, in the middle
// of delivering completions. gettid is a cheap syscall with no scheduler
// involvement; a match proves we are on that locked thread, which only its
// reaper goroutine runs on while it delivers. The caller is locked to its
// thread for the comparison: unlocked, it could be moved to another thread
// after gettid, and the reaper could start a batch on the thread it left,
// so a stale id would match (and the caller's requests wait, deferred, for
// a batch that has sent its own).
//
// When no reaper is delivering, the caller is not one, and the gettid is
// skipped: a completion function runs after its reaper's beginDelivery,
// on the same goroutine, so it sees its queue's reaperTid set. At low load
// a Submit almost never meets a delivery, and the syscall, dear on a
// virtual machine, showed in the server's CPU per device GET.
func ownQueue[Q kernelQueue](queues []Q) (Q, bool) {
	var none Q
	if !anyDelivering(queues) {
		return none, false
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := int32(unix.Gettid())
	for _, q := range queues {
		if s := q.state(); s.reaperTid.Load() == tid && s.delivering {
			return q, true
		}
	}
	return none, false
}

// anyDelivering reports whether some queue's reaper is delivering.
func anyDelivering[Q kernelQueue](queues []Q) bool {
	for _, q := range queues {
		if q.state().reaperTid.Load() != 0 {
			return true
		}
	}
	return false
}

// pickQueue spreads submitters over the queues: it starts at the next queue
// round-robin and locks the first whose lock is free, so concurrent
// submitters do not line up behind one queue's lock; if all are busy it
// waits for the first one.
func pickQueue[Q kernelQueue](queues []Q, next *atomic.Uint32) Q {
	n := uint32(len(queues))
	start := next.Add(1)
	for i := range n {
		if q := queues[(start+i)%n]; q.state().mu.TryLock() {
			return q
		}
	}
	q := queues[start%n]
	q.state().mu.Lock()
	return q
}

// claim prepares reqs[i] of a batch for the kernel, the part both file
// backends share: it checks the request (reqs[0] was checked by Submit),
// finds its segment's file, takes its slot (first for reqs[0]; the others
// without waiting, since the caller holds a queue lock a reaper may need)
// and records the request there. ok false ends the batch early, with err
// saying why when something failed; the slot of a refused request is
// released, so nothing leaks.
func (c *core) claim(files *segmentFiles, reqs []Request, i int, first uint32) (idx uint32, fd int32, ok bool, err error) {
	r := &reqs[i]
	if i > 0 {
		if err = c.check(r); err != nil {
			return 0, 0, false, err
		}
	}
	if fd, err = files.fd(r.Offset/c.cfg.SegmentBytes, r.Op == OpWrite); err != nil {
		if i == 0 {
			c.release(first)
		}
		return 0, 0, false, err
	}
	idx = first
	if i > 0 {
		if idx, ok = c.acquire(false); !ok {
			return 0, 0, false, nil
		}
	}
	if c.closed.Load() {
		c.release(idx)
		return 0, 0, false, ErrClosed
	}
	c.fill(idx, r)
	return idx, fd, true, nil
}
