package device

import "sync/atomic"

// Poller is a Device whose completions a waiting caller can take itself:
// Poll delivers, on the caller's goroutine, what the kernel has completed
// and no completion goroutine has taken yet (localmemory: the requests
// queued for a completion goroutine, performed by the caller), without
// waiting, and returns how many requests it completed (OnComplete calls
// made). It never waits, for the kernel or for a completion goroutine (a
// uring ring one of them is reaping is skipped; libaio's kernel hands each
// event to one taker; a localmemory queue is taken whole by one swap).
//
// Why: a completion goroutine waits for its queue's doorbell in Go's
// netpoller, and a busy process looks at the netpoller only when a P runs
// out of goroutines to run (or when the runtime's monitor does, every 10
// ms). On a server pinned to one CPU with 64 connections, most of the
// reapers' turns took a full batch (256 CQEs): completed reads waited in
// the CQ behind runnable connections while the disk's queue ran low. A
// goroutine about to wait for its own completions polls first, and takes
// everyone's. On the 2-CPU virtio test host, with polling switched on and
// off cell by cell on one server, uring and libaio read more GETs a
// second at 64 connections for less server CPU per GET, and at 8 more or
// as many; on localmemory the tiered server read a little more for less
// CPU per GET too, since a session that would park takes its queue
// instead of handing the copies to another goroutine and waiting to be
// woken (docs/notes/2026-12-07-comment-figures.md has the figures).
//
// Poll must not be called from a completion function, nor while holding
// anything a completion function takes. After Close it returns 0.
type Poller interface {
	Poll() int
}

var (
	_ Poller = (*uringDevice)(nil)
	_ Poller = (*aioDevice)(nil)
	_ Poller = (*memDevice)(nil)
)

// Poll implements Poller: one batch from each ring whose CQ holds CQEs
// and whose CQ lock is free.
func (d *uringDevice) Poll() int {
	if !d.enter() { // the rings stay mapped until we leave
		return 0
	}
	defer d.leave()
	var batch [uringReapBatch]uringDone
	completed := 0
	for _, r := range d.rings {
		if atomic.LoadUint32(r.cqTail) == atomic.LoadUint32(r.cqHead) || !r.cq.TryLock() {
			continue
		}
		n := r.take(batch[:])
		r.cq.Unlock()
		d.warmDone(batch[:n])
		completed += d.completeTaken(batch[:n])
	}
	return completed
}

// Poll implements Poller: one batch from each context whose completion
// ring holds events. A context whose ring header is not the one we know
// is skipped: finding out would cost a syscall per call.
func (d *aioDevice) Poll() int {
	if !d.enter() { // the contexts stay set up until we leave
		return 0
	}
	defer d.leave()
	var events [aioBatch]ioEvent
	completed := 0
	for _, c := range d.ctxs {
		if c.posted == nil || !c.posted(0) {
			continue
		}
		n, _ := c.take(events[:])
		d.warm(n, func(i int) (uint32, bool) { return uint32(events[i].data), true })
		for i := range n {
			d.complete(uint32(events[i].data), events[i].res)
		}
		completed += n
	}
	return completed
}

// Poll implements Poller: every completion queue's waiting requests,
// taken whole as a completion goroutine takes them (the goroutine then
// finds its queue empty), performed and delivered on the caller's
// goroutine. With inline completion there is nothing to take.
func (d *memDevice) Poll() int {
	completed := 0
	for _, q := range d.queues {
		if q.top.Load() == 0 {
			continue
		}
		completed += d.serveTaken(q, q.top.Swap(0))
	}
	return completed
}
