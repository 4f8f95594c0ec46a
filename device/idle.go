package device

import (
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// IdleSubmitter is a Device that completes a lone request on an idle
// device on the submitter's own thread: SubmitIdle is Submit, except that
// when the device has nothing else in flight it waits in the kernel for
// the completion and delivers what it took (OnComplete on the caller's
// goroutine) before it returns, as fio waits at queue depth 1.
//
// Why: an io_uring read's completion work runs as task_work on the thread
// that submitted it. After a plain Submit that thread has gone back to the
// Go scheduler, so the finished read first waits for that thread to be
// woken to post its CQE, then for the doorbell to wake the reaper through
// the netpoller, then for the hand-off to the waiting goroutine: three
// wake-ups of an idle machine in a row, where fio has one. Measured on the
// 2-CPU virtio test host, one read at a time: see the commit that added it.
//
// Only one request at a time and only with nothing else in flight: the
// caller's thread waits in the kernel (an ordinary syscall, see wait),
// which costs nothing when the process has nothing else to run; under load
// the plain path is taken. So is it when the process has a single P
// (GOMAXPROCS 1, as a server pinned to one CPU gets): the waiting thread
// holds that P until the runtime's monitor retakes it, which on a quiet
// process sleeps up to 10 ms, and every other connection waits with it.
// Measured on one CPU with 8 connections one GET each in flight, the uring
// server fell behind the offered rate and its latency ran away, where
// libaio (which has no idle path) kept up
// (docs/notes/2026-12-07-comment-figures.md has the figures). SubmitIdle
// must not be called from a completion function.
type IdleSubmitter interface {
	SubmitIdle(reqs []Request) (accepted int, err error)
}

var _ IdleSubmitter = (*uringDevice)(nil)

// SubmitIdle implements IdleSubmitter.
func (d *uringDevice) SubmitIdle(reqs []Request) (int, error) {
	if len(reqs) != 1 || d.inFlight.Load() != 0 || runtime.GOMAXPROCS(0) < 2 {
		return d.Submit(reqs)
	}
	if !d.enter() {
		return 0, ErrClosed
	}
	defer d.leave()
	if err := d.check(&reqs[0]); err != nil {
		return 0, err
	}
	idx, ok := d.acquire(true)
	if !ok {
		return 0, ErrClosed
	}
	r := pickQueue(d.rings, &d.next)
	// The CQ lock is taken before the request reaches the kernel, so that
	// the reaper cannot take its completion: waiting for a CQE that was
	// already reaped would wait forever. A reaper holding it is busy, and
	// so is the device: the plain path then.
	own := r.cq.TryLock()
	n, err := d.submitBatch(r, reqs, false, idx)
	r.mu.Unlock()
	if !own {
		return n, err
	}
	if n == 0 || err != nil {
		r.cq.Unlock()
		return n, err
	}
	d.reapOwn(r)
	return n, nil
}

// reapOwn waits in the kernel until ring r has a CQE, takes what it has
// posted, releases the CQ lock the caller holds and delivers. The caller's
// request is in flight on r, so the wait ends. A CQE it does not take
// (more than fit, or the caller's posted after another's) is the reaper's:
// the doorbell rang for it.
func (d *uringDevice) reapOwn(r *uringRing) {
	var batch [8]uringDone
	for atomic.LoadUint32(r.cqTail) == *r.cqHead {
		if e := r.wait(); e != 0 && e != unix.EINTR && e != unix.EAGAIN && e != unix.EBUSY {
			break // the reaper delivers it; the doorbell rings all the same
		}
	}
	n := r.take(batch[:])
	r.cq.Unlock()
	d.completeTaken(batch[:n])
}

// wait is io_uring_enter waiting for one completion, made as an ordinary
// syscall (unlike enter, which never waits): the scheduler may hand the P
// to another thread if the read takes long and something else is ready to
// run, and on an idle process it does not (the runtime retakes a P from a
// syscall only when there is other work, or after 10 ms).
func (r *uringRing) wait() unix.Errno {
	_, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, uringEnterGetEvents, 0, 0)
	return e
}
