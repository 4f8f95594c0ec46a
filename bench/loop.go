package bench

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// clientLoop drives a share of an offline cell's connections from one
// goroutine with its own epoll instance: each wake-up reads every ready
// connection once, parses all the replies that arrived, and writes that
// connection's next requests at most once (a cell's only connection, its
// window split over TCP, reads and writes up to a group at a time, a few
// times per wake-up: see window.go). It naps or parks (see
// idleWait and wait) only when no connection is ready. It is not locked to its OS
// thread: a locked goroutine that parks hands its thread off through a
// futex, the very cost wait avoids.
//
// Why not a goroutine per connection (what the cell did before): each
// connection then parks in Go's netpoller on every EAGAIN, so every batch
// costs a read that fails, a park, a netpoll wake-up and a goroutine
// switch, and that cost grew with the connection count until the client
// used far more CPU per op than redis-benchmark at many connections.
// One thread polling many sockets pays one epoll_wait for all the
// connections that became ready together, which is what redis-benchmark's
// single event loop does.
//
// The loop owns its connections' descriptors: they are taken out of Go's
// netpoller (socket.detach) so readiness is reported to this epoll alone,
// and are closed by close. A loop is used by one goroutine; stop and cut
// are shared with the cell's timer and context.
type clientLoop struct {
	p      *plan
	epfd   int
	wakefd int // eventfd, written by wake: the run must end now
	conns  []*loopConn
	events []unix.EpollEvent

	epFile  *os.File        // epfd, registered in Go's netpoller
	poller  syscall.RawConn // epFile's: wait parks through it
	pollF   func(uintptr) bool
	ready   int   // events pollOnce found
	pollErr error // and its error

	idle idleWait // how the loop waits when nothing is ready

	single bool // the loop has the cell's only connection: its window is split (window.go)

	stop *atomic.Bool // set when the window ends or a connection failed
	cut  *atomic.Bool // set when the context ended: abandon owed replies
	end  time.Time    // --start-at window end: a batch answered after it is not counted
	live int          // connections not yet finished in this run

	t0       time.Time                           // when run began: the mix latencies' clock
	mixHists *[numMixOps]*hdrhistogram.Histogram // --op-mix: latencies per operation
}

// loopConn is one connection's state inside a clientLoop.
type loopConn struct {
	t       *offlineThread
	fd      int
	tls     *tls.Conn // over TLS: requests encrypted into tp.out, replies decrypted from tp.in
	tp      *tlsPipe
	rec     *tlsRecordReader // decrypts the replies when it can, else tls does
	id      int32            // index in the loop's conns, the epoll event's tag
	done    bool             // finished this run, removed from epoll
	outWait bool             // EPOLLOUT registered: a write is waiting for room

	// Batch pipeline: batch is the index of the batch in flight, left its
	// replies still owed, out its bytes not yet written; mark holds the
	// figures from before it, restored when it ends after the window.
	batch, left int
	out         []byte
	mark        batchMark
	// --op-mix: when the batch was first written (since the loop's t0),
	// and the mix figures before it.
	sentNs  int64
	mixMark mixMark

	// Window pipeline (see window.go). replyBytes and repliesSeen are the
	// bytes read and replies parsed over TCP, kept from run to run: the
	// mean reply length bounds a split window's reads (windowReadCap).
	win                     windowState
	replyBytes, repliesSeen int64

	// reads and writes count the read(2) and write(2) calls made on the
	// connection, records the TLS records its requests went in: the
	// system calls per op are what tests and profiles compare.
	reads, writes, records int64
}

// errInterrupted ends a loop's connections when the cell's context ends.
var errInterrupted = errors.New("bench: interrupted")

// loopCount is how many event loops drive threads connections: Loops, or
// one per CPU the process may run on (GOMAXPROCS, which Go derives from
// sched_getaffinity and the cgroup CPU limit), never more than threads.
func loopCount(p *plan, threads int) int {
	n := p.Loops
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return max(1, min(n, threads))
}

// newClientLoops spreads ts round-robin over n loops, detaching each
// connection's descriptor from Go's netpoller. On error the loops made so
// far are closed.
func newClientLoops(p *plan, ts []*offlineThread, n int, stop, cut *atomic.Bool, end time.Time) ([]*clientLoop, error) {
	loops := make([]*clientLoop, n)
	for i := range loops {
		loops[i] = &clientLoop{p: p, epfd: -1, wakefd: -1, single: len(ts) == 1, stop: stop, cut: cut, end: end, idle: newIdleWait(p.IdleNap)}
		if p.mix != nil {
			loops[i].mixHists = newMixHistograms()
		}
	}
	fail := func(err error) ([]*clientLoop, error) {
		for _, l := range loops {
			l.close()
		}
		return nil, err
	}
	for i, t := range ts {
		fd, err := t.conn.detach()
		if err != nil {
			return fail(err)
		}
		t.rr.pushed = true // the loop fills the buffer; the parser never reads
		l := loops[i%n]
		c := &loopConn{t: t, fd: fd, id: int32(len(l.conns))}
		if t.conn.tls != nil {
			c.tls, c.tp = t.conn.tls, t.conn.pipe
			c.tp.loopMode(tlsInBytes)
			if c.rec, err = newRecordReader(c.tls.ConnectionState(), c.tp.keys.serverSecret, c.tp.records-c.tp.appStart); err != nil {
				unix.Close(fd)
				return fail(fmt.Errorf("bench: TLS record keys: %w", err))
			}
		}
		l.conns = append(l.conns, c)
	}
	for _, l := range loops {
		if err := l.open(); err != nil {
			return fail(err)
		}
	}
	return loops, nil
}

// open makes the loop's epoll instance and wake-up eventfd.
func (l *clientLoop) open() error {
	var err error
	if l.epfd, l.wakefd, err = openEpoll(); err != nil {
		return err
	}
	// The epoll descriptor goes into Go's netpoller (non-blocking, so
	// os.NewFile registers it), which is where wait parks.
	if err := unix.SetNonblock(l.epfd, true); err != nil {
		return fmt.Errorf("bench: epoll descriptor non-blocking: %w", err)
	}
	l.epFile = os.NewFile(uintptr(l.epfd), "epoll")
	if l.poller, err = l.epFile.SyscallConn(); err != nil {
		return fmt.Errorf("bench: epoll descriptor: %w", err)
	}
	l.pollF = l.pollOnce
	l.events = make([]unix.EpollEvent, len(l.conns)+1)
	return nil
}

// openEpoll makes an event loop's epoll instance and its wake-up eventfd,
// registered in it with the tag -1; a descriptor not made is -1.
func openEpoll() (epfd, wakefd int, err error) {
	if epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return -1, -1, fmt.Errorf("bench: epoll_create1: %w", err)
	}
	if wakefd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return epfd, -1, fmt.Errorf("bench: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		return epfd, wakefd, fmt.Errorf("bench: epoll_ctl add eventfd: %w", err)
	}
	return epfd, wakefd, nil
}

// close releases the loop's descriptors, its connections' included.
func (l *clientLoop) close() {
	for _, c := range l.conns {
		closeFDs(&c.fd)
	}
	if l.epFile != nil {
		l.epFile.Close() // closes epfd
		l.epFile, l.epfd = nil, -1
	}
	closeFDs(&l.epfd, &l.wakefd)
}

// closeFDs closes each descriptor that is open (not -1) and marks it -1.
func closeFDs(fds ...*int) {
	for _, fd := range fds {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// wake makes a loop blocked in epoll_wait return; it is safe from any
// goroutine.
func (l *clientLoop) wake() { wakeFD(l.wakefd) }

// wakeFD adds one to the eventfd fd, making it readable.
func wakeFD(fd int) {
	one := uint64(1)
	unix.Write(fd, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// run drives every connection of the loop until each has finished: its
// last batch answered (or its window drained) after stop, or failed.
// Failures are left in the connection's offlineThread.err, and set stop so
// that the cell's other connections finish too. It allocates nothing per
// request.
func (l *clientLoop) run() {
	l.live = 0
	l.t0 = time.Now()
	for _, c := range l.conns {
		c.done, c.outWait = false, false
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			c.t.err = fmt.Errorf("bench: epoll_ctl add: %w", err)
			c.done = true
			l.stop.Store(true)
			continue
		}
		l.live++
		l.start(c)
	}
	for l.live > 0 {
		n, err := l.wait()
		if err != nil {
			l.abandon(fmt.Errorf("bench: epoll_wait: %w", err))
			return
		}
		for _, ev := range l.events[:n] {
			if ev.Fd < 0 {
				continue // the wake-up eventfd: cut is checked below
			}
			c := l.conns[ev.Fd]
			if !c.done && c.outWait && ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.writable(c)
			}
			if !c.done && ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.readable(c)
			}
		}
		if l.cut.Load() {
			l.abandon(errInterrupted)
			return
		}
	}
}

// wait returns the number of ready events, polling the loop's epoll
// without blocking and, when nothing is ready, parking the goroutine in
// Go's netpoller until the epoll descriptor itself becomes readable. Why
// not a blocking epoll_wait: a goroutine blocked in a system call makes
// the runtime hand its P to another thread and take it back on return, a
// futex wake-up and two context switches per wait, which the profile
// showed costing more than the socket calls; parked in the netpoller, the
// loop's thread waits in the scheduler's own epoll_wait instead.
func (l *clientLoop) wait() (int, error) {
	if err := l.poller.Read(l.pollF); err != nil {
		return 0, err
	}
	return l.ready, l.pollErr
}

// pollOnce is the poller's read callback: false means "park until the
// epoll descriptor is readable".
func (l *clientLoop) pollOnce(uintptr) bool {
	timeoutMs := 0
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(timeoutMs), 0, 0)
		timeoutMs = 0
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			l.ready, l.pollErr = 0, e
		case n == 0:
			if l.idle.again() {
				continue
			}
			if l.idle.auto {
				timeoutMs = blockMillis
				continue
			}
			return false
		default:
			l.ready, l.pollErr = int(n), nil
		}
		l.idle.ready()
		return true
	}
}

// blockMillis bounds one blocking epoll_pwait of an auto loop that parks
// (see idleWait). Why block in the loop's own epoll rather than park in
// Go's netpoller: parked, a wake-up costs the scheduler's search for work,
// its own epoll_wait and then the loop's, a large share of the client's
// CPU at few connections in a profile; blocked in a raw system call the
// loop keeps its P and the reply wakes it straight into its own
// epoll_pwait. The runtime sees a running goroutine: the bound
// (and every return to Go through idleWait.again, a preemption point)
// lets it preempt the loop for its timers and the garbage collector, as
// it does the loop's naps; the eventfd still ends the wait at once.
const blockMillis = 5

// start sends a connection's first requests of the run.
func (l *clientLoop) start(c *loopConn) {
	if l.p.Pipeline == PipelineWindow {
		l.startWindow(c)
		return
	}
	c.batch = 0
	l.sendBatch(c)
}

// readable reads once from a ready connection and consumes every reply
// that is complete in its buffer.
func (l *clientLoop) readable(c *loopConn) {
	rr := c.t.rr
	extra := 0
	if c.tp != nil {
		// Room for all the plaintext of what is buffered and one record more.
		extra = c.tp.pending() + tlsMaxRecord
	}
	rr.makeRoom(extra)
	if c.tp != nil {
		l.readableTLS(c)
		return
	}
	for range windowReadGroups {
		p := rr.buf[rr.w:]
		bound := 0
		if l.p.Pipeline == PipelineWindow {
			if bound = windowReadCap(c, l.p.Batch); bound > 0 && bound < len(p) {
				p = p[:bound]
			}
		}
		n, ok := l.readOnce(c, p)
		if !ok {
			return
		}
		c.replyBytes += int64(n)
		l.consume(c, n)
		// A split window's read that took all it might has most likely
		// left replies in the socket: read them now, the refill of the
		// group before already written, rather than after another
		// epoll_pwait. Bounded, so that the loop still returns to see
		// its eventfd.
		if bound == 0 || n < len(p) || c.done {
			return
		}
		rr.makeRoom(0)
	}
}

// readOnce is the wake-up's one read(2) into p; false means nothing was
// read: not ready after all (level-triggered, a real readiness is
// reported again), or the connection failed.
func (l *clientLoop) readOnce(c *loopConn, p []byte) (int, bool) {
	n, e := rawRead(c.fd, p)
	c.reads++
	switch {
	case e == unix.EAGAIN || e == unix.EINTR:
		return 0, false
	case e != 0:
		l.fail(c, fmt.Errorf("read %s replies: %w", l.p.op, closedErr(e)))
		return 0, false
	case n == 0:
		l.fail(c, fmt.Errorf("read %s replies: %w", l.p.op, errServerClosed))
		return 0, false
	}
	return n, true
}

// consume counts n new bytes of replies in c's buffer and parses every
// reply complete there.
func (l *clientLoop) consume(c *loopConn, n int) {
	if !c.t.rr.pushedBytes(n) {
		return
	}
	if l.p.Pipeline == PipelineWindow {
		l.windowReplies(c)
	} else {
		l.batchReplies(c)
	}
}

// writeOut writes what is left of c.out, waiting for EPOLLOUT when the
// socket takes only part of it.
func (l *clientLoop) writeOut(c *loopConn) {
	if c.tp != nil {
		p := c.out
		c.out = nil
		l.sendTLS(c, p)
		return
	}
	n, ok := l.writeSome(c, c.out, "batch")
	c.t.sent += int64(n)
	c.out = c.out[n:]
	if ok {
		l.waitOut(c, false)
	}
}

// writeSome writes p until all of it is written or the socket is full,
// and returns the bytes written and whether that was all of p. When not,
// it has registered for EPOLLOUT, or failed the connection.
func (l *clientLoop) writeSome(c *loopConn, p []byte, what string) (int, bool) {
	written := 0
	for written < len(p) {
		n, e := rawWrite(c.fd, p[written:])
		c.writes++
		switch e {
		case 0:
			if written += n; written < len(p) {
				l.waitOut(c, true) // a short write: the socket is full
				return written, false
			}
		case unix.EINTR:
		case unix.EAGAIN:
			l.waitOut(c, true)
			return written, false
		default:
			l.fail(c, fmt.Errorf("send %s %s: %w", l.p.op, what, closedErr(e)))
			return written, false
		}
	}
	return written, true
}

// writable continues the write that was waiting for room.
func (l *clientLoop) writable(c *loopConn) {
	if c.tp != nil {
		l.flushTLS(c)
	} else if l.p.Pipeline == PipelineWindow {
		l.writeWindow(c)
	} else {
		l.writeOut(c)
	}
}

// waitOut registers (on) or drops interest in c's writability.
func (l *clientLoop) waitOut(c *loopConn, on bool) {
	if c.outWait == on || c.done {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.fail(c, fmt.Errorf("bench: epoll_ctl mod: %w", err))
		return
	}
	c.outWait = on
}

// finish ends c's run and takes it out of the epoll set.
func (l *clientLoop) finish(c *loopConn) {
	if c.done {
		return
	}
	c.done = true
	l.live--
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
}

// fail ends c's run with err and stops the cell: the other connections
// finish their batch so the figures stay consistent.
func (l *clientLoop) fail(c *loopConn, err error) {
	if c.t.err == nil {
		c.t.err = err
	}
	l.finish(c)
	l.stop.Store(true)
}

// abandon ends every unfinished connection with err, owed replies and all.
func (l *clientLoop) abandon(err error) {
	for _, c := range l.conns {
		if !c.done {
			l.fail(c, err)
		}
	}
}

// rawRead is read(2) on a non-blocking descriptor; it never blocks, so it
// skips the runtime's syscall bookkeeping.
func rawRead(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// rawWrite is write(2) on a non-blocking descriptor.
func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}
