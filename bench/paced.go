package bench

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pacedLoop drives a share of a fixed-rate online run's connections from
// one goroutine with its own epoll instance: it sends each connection's
// ops at their due times and reads their replies as they arrive, timing
// both on the same thread.
//
// Why not a sleeping sender per connection (what the run did before): Go's
// timers wait in the scheduler's epoll_wait, whose timeout is whole
// milliseconds, so a sleep shorter than a millisecond ends up to a
// millisecond late, and every op was charged that lateness. Here the wait
// is a timerfd in the loop's own epoll set, which the kernel fires at the
// nanosecond it was set for (no timer slack applies to it), set spinNs
// before the due time; the loop spins the rest, polling for replies, so
// an op leaves within microseconds of its due time.
//
// Connection c of T has its ops due at c/T of an interval after the
// others', so the run's sends are spread evenly instead of all T leaving
// together. The loop owns its connections' descriptors (socket.detach).
type pacedLoop struct {
	conns      []*pacedConn
	base       time.Time
	intervalNs int64 // between two ops of one connection
	spinNs     int64 // how long before a due time the loop stops blocking
	yield      bool  // spin with sched_yield: a server may share the loop's CPU
	maxSpinNs  int64 // and at most
	armAtNs    int64 // when the timer was last set to fire, since base
	armedNs    int64 // armAtNs once the timer fired during a poll; else 0
	spunNs     int64 // time spent spinning towards due times: CPU used on purpose

	epfd, timerfd, wakefd int
	events                []unix.EpollEvent
	timerSpec             unix.ItimerSpec
	scratch               [8]byte // timerfd and eventfd counts are read into it

	stop  *atomic.Bool // no op is sent after it; owed replies are awaited
	cut   *atomic.Bool // owed replies are abandoned
	onErr func()       // called once a connection failed, to stop the run
	live  int          // connections not finished
}

// pacedConn is one connection of a pacedLoop.
type pacedConn struct {
	t       *onlineThread
	fd      int
	src     *opSource
	ring    []inflight // FIFO of the ops awaiting replies, InFlight long
	head, n int
	k       int64     // the next op to send, due at t.phaseNs + k×intervalNs
	id      int32     // the epoll tag: its index in the loop's conns
	keys    [1]uint64 // the key of the reply being read (the parser keeps it)
	out     []byte
	outWait bool // EPOLLOUT registered: out holds bytes the socket did not take
	// freedNs is when the last reply that found every in-flight slot
	// taken was read: an op due before it could not be sent before it.
	freedNs int64
	done    bool
}

// Epoll tags of the loop's own descriptors (openEpoll tags the eventfd
// -1); a connection's is its index.
const (
	tagWake  = -1
	tagTimer = -2
)

// A paced loop blocks until spinNs before an op's due time and spins the
// rest. spinNs follows how late the timer's wake-ups come (wokeLate): on
// a virtual machine a wake-up costs tens of microseconds, even for a
// timerfd on an idle CPU, more when other processes hold the CPUs, and a
// spin that covers it sends on time. It stays within [pacedSpinMinNs,
// maxSpin], never more than pacedSpinMaxNs. The ceiling is where raising it
// stopped paying: against redis-server on a two-CPU machine, each doubling
// up to it gave a lower latency (loaded) or lateness (quiet), the last for
// little more spin (docs/notes/2026-12-07-comment-figures.md has the
// figures).
const (
	pacedSpinMinNs = 10_000
	pacedSpinMaxNs = 400_000
)

// pacedMergeGapNs is the gap between a loop's sends under which the
// loops are merged (pacedLoopCount): such loops would spin through most
// of their gaps.
const pacedMergeGapNs = 400_000

// maxSpin is the longest spin of a loop among n driving threads
// connections whose ops are intervalNs apart each. When the loops leave
// the process a CPU to spare, or no server shares its CPUs
// (Config.OwnCPUs) (either: spare), a loop may spin through the whole
// gap between its sends: where that gap is shorter than a wake-up, a loop
// that blocks sends every op a wake-up late, and its latency grows with it,
// where one that spins sends on time. Without a spare CPU the spin is at
// most an eighth of the gap, leaving the CPU to the server.
func maxSpin(intervalNs int64, threads, n int, spare bool) int64 {
	gapNs := intervalNs * int64(n) / int64(threads) // between a loop's sends
	if !spare {
		gapNs /= 8
	}
	return max(pacedSpinMinNs, min(pacedSpinMaxNs, gapNs))
}

// spinSpare says whether n paced loops may spin through their gaps: the
// client's CPUs are its own (Config.OwnCPUs), or the loops leave one of
// them spare.
func spinSpare(p *plan, n int) bool {
	return p.OwnCPUs || n < runtime.GOMAXPROCS(0)
}

// spinYields says whether a spinning loop gives its CPU away at every
// turn (sched_yield): unless the client's CPUs are its own, a server may
// be scheduled on the CPU the loop spins on, and the kernel lets it wait
// for the spinner's time slice. Measured here with our server and with
// redis-server sharing the client's CPUs, yields cut the p99 several times
// over while the client's lateness stayed the same
// (docs/notes/2026-12-07-comment-figures.md has the figures). A yield with
// no one else runnable returns at once, so the spin keeps its precision.
func spinYields(p *plan) bool { return !p.OwnCPUs }

// schedYield is sched_yield(2); it cannot fail.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// pacedOpsPerLoop is the offered rate each paced loop takes when the
// loops would otherwise spin throughout: one loop sends and reads 100 k
// ops/s in well under a CPU (a send and a read of a few microseconds each).
const pacedOpsPerLoop = 100_000

// pacedLoopCount is how many paced loops drive threads connections at
// rateOps: Loops; else one per CPU, at most one per connection, as
// offline, unless that many loops would send less than pacedMergeGapNs
// apart each and so spin through most of their gaps (maxSpin): then one
// per pacedOpsPerLoop of the rate, since every spinning loop is a CPU the
// server cannot have. At 13 000 GET/s on two CPUs that is one loop.
func pacedLoopCount(p *plan, threads int, rateOps float64) int {
	n := loopCount(p, threads)
	if p.Loops > 0 {
		return n
	}
	if gapNs := float64(n) / rateOps * 1e9; gapNs < pacedMergeGapNs {
		n = max(1, min(n, int(math.Ceil(rateOps/pacedOpsPerLoop))))
	}
	return n
}

// wokeLate adapts spinNs to a timer wake-up lateNs after the time the timer
// was set for: up at once to what covers it, down slowly, so that spinNs
// tracks a high quantile of the wake-ups' lateness.
func (l *pacedLoop) wokeLate(lateNs int64) {
	target := lateNs + lateNs/2 + pacedSpinMinNs
	if target > l.spinNs {
		l.spinNs = target
	} else {
		l.spinNs -= (l.spinNs - target) / 64
	}
	l.spinNs = max(pacedSpinMinNs, min(l.spinNs, l.maxSpinNs))
}

// newPacedLoops spreads ts round-robin over n loops, op k of connection i
// due at (i/len(ts) + k) × intervalNs after the base each loop is given
// before it runs. On error the loops made so far are closed.
func newPacedLoops(p *plan, ts []*onlineThread, n int, intervalNs int64, stop, cut *atomic.Bool, onErr func()) ([]*pacedLoop, error) {
	loops := make([]*pacedLoop, n)
	for i := range loops {
		loops[i] = &pacedLoop{intervalNs: intervalNs, spinNs: pacedSpinMinNs, maxSpinNs: maxSpin(intervalNs, len(ts), n, spinSpare(p, n)), yield: spinYields(p), epfd: -1, timerfd: -1, wakefd: -1, stop: stop, cut: cut, onErr: onErr}
	}
	fail := func(err error) ([]*pacedLoop, error) {
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
		t.rr.pushed = true
		t.phaseNs = int64(i) * intervalNs / int64(len(ts))
		l := loops[i%n]
		l.conns = append(l.conns, &pacedConn{t: t, fd: fd, id: int32(len(l.conns)), src: newOpSource(p, i), ring: make([]inflight, p.InFlight),
			out: make([]byte, 0, 4096)})
	}
	for _, l := range loops {
		if err := l.open(); err != nil {
			return fail(err)
		}
	}
	return loops, nil
}

// open makes the loop's epoll instance, its timer and its wake-up eventfd,
// and registers them and the connections.
func (l *pacedLoop) open() error {
	var err error
	if l.epfd, l.wakefd, err = openEpoll(); err != nil {
		return err
	}
	if l.timerfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		l.timerfd = -1
		return fmt.Errorf("bench: timerfd_create: %w", err)
	}
	add := func(fd int, tag int32) error {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: tag}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fmt.Errorf("bench: epoll_ctl add: %w", err)
		}
		return nil
	}
	if err := add(l.timerfd, tagTimer); err != nil {
		return err
	}
	for _, c := range l.conns {
		if err := add(c.fd, c.id); err != nil {
			return err
		}
	}
	l.live = len(l.conns)
	l.events = make([]unix.EpollEvent, len(l.conns)+2)
	return nil
}

// close releases the loop's descriptors, its connections' included.
func (l *pacedLoop) close() {
	for _, c := range l.conns {
		closeFDs(&c.fd)
	}
	closeFDs(&l.epfd, &l.timerfd, &l.wakefd)
}

// wake makes the loop look at stop and cut now; safe from any goroutine.
func (l *pacedLoop) wake() { wakeFD(l.wakefd) }

func (l *pacedLoop) now() int64 { return int64(time.Since(l.base)) }

// run sends and receives until stop, then until every owed reply is in
// (or cut). Each connection's nextK is set when it ends. It allocates
// nothing per op.
func (l *pacedLoop) run() {
	defer func() {
		for _, c := range l.conns {
			c.t.nextK = c.k
		}
	}()
	for l.live > 0 {
		if l.cut.Load() {
			l.abandon(errInterrupted)
			return
		}
		startNs := l.now()
		next := l.sendDue(startNs)
		if l.live == 0 {
			return
		}
		if n := l.poll(0); n > 0 {
			continue // replies may have freed slots: send what is due first
		}
		nowNs := l.now()
		switch wait := next - nowNs; {
		case next == math.MaxInt64:
			l.poll(-1) // nothing to send: until a reply, stop or cut
		case wait > l.spinNs:
			l.arm(wait - l.spinNs)
			l.poll(-1)
			if l.armedNs > 0 { // woken by the timer, not by a reply
				l.wokeLate(l.now() - l.armedNs)
				l.armedNs = 0
			}
		default: // the due time is near: spin
			if l.yield {
				schedYield()
			}
			l.spunNs += nowNs - startNs
		}
	}
}

// sendDue sends every op due by nowNs on connections with a free slot and
// returns the earliest due time of those left (math.MaxInt64: none, as
// every connection is full, stopping or done).
func (l *pacedLoop) sendDue(nowNs int64) int64 {
	next := int64(math.MaxInt64)
	stopping := l.stop.Load()
	for _, c := range l.conns {
		if c.done {
			continue
		}
		if stopping {
			if !c.t.stopSeen {
				c.t.fullAtStop, c.t.stopSeen = c.n == len(c.ring), true
			}
			if c.n == 0 {
				l.finish(c)
			}
			continue
		}
		for c.n < len(c.ring) && !c.done {
			due := c.t.phaseNs + c.k*l.intervalNs
			if due > nowNs {
				next = min(next, due)
				break
			}
			l.send(c, due)
		}
	}
	return next
}

// send issues c's op k, stamped with its due time, and records how late
// it left.
func (l *pacedLoop) send(c *pacedConn, dueNs int64) {
	op, key, req := c.src.next()
	c.ring[(c.head+c.n)%len(c.ring)] = inflight{stampNs: dueNs, key: key, op: op}
	c.n++
	c.k++
	if dueNs >= c.t.warmupNs {
		now := l.now()
		c.t.late.RecordValue(min(max(now-dueNs, histLowestNs), histHighestNs))
		c.t.own.RecordValue(min(max(now-max(dueNs, c.freedNs), histLowestNs), histHighestNs))
	}
	if len(c.out) > 0 { // the socket is full: queue behind what waits
		c.out = append(c.out, req...)
		return
	}
	n, e := rawWrite(c.fd, req)
	switch e {
	case 0, unix.EAGAIN, unix.EINTR:
		if e != 0 {
			n = 0
		}
		if n < len(req) {
			c.out = append(c.out, req[n:]...)
			l.waitOut(c, true)
		}
	default:
		l.failSend(c, op, e)
	}
}

// flush writes what the socket did not take before.
func (l *pacedLoop) flush(c *pacedConn) {
	for len(c.out) > 0 {
		n, e := rawWrite(c.fd, c.out)
		switch e {
		case 0:
			c.out = c.out[:copy(c.out, c.out[n:])]
		case unix.EINTR:
		case unix.EAGAIN:
			return
		default:
			l.failSend(c, c.ring[c.head].op, e)
			return
		}
	}
	l.waitOut(c, false)
}

func (l *pacedLoop) failSend(c *pacedConn, op opcode, e error) {
	if c.t.sendErr == nil {
		c.t.sendErr = fmt.Errorf("send %s: %w", op, closedErr(e))
	}
	l.finish(c)
	l.onErr()
}

// waitOut registers (on) or drops interest in c's writability.
func (l *pacedLoop) waitOut(c *pacedConn, on bool) {
	if c.outWait == on || c.done {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.failRecv(c, fmt.Errorf("bench: epoll_ctl mod: %w", err))
		return
	}
	c.outWait = on
}

// arm sets the loop's timer to fire in ns.
func (l *pacedLoop) arm(ns int64) {
	l.armedNs = 0 // set when it fires
	l.armAtNs = l.now() + ns
	l.timerSpec.Value = unix.NsecToTimespec(ns)
	unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(l.timerfd), 0, uintptr(unsafe.Pointer(&l.timerSpec)), 0, 0, 0)
}

// poll waits up to timeoutMs (0: not at all, -1: until an event) and
// handles what is ready, returning how many events were.
func (l *pacedLoop) poll(timeoutMs int) int {
	var n int
	var err error
	if timeoutMs == 0 {
		// Never blocks, so it skips the runtime's syscall bookkeeping.
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
		n = int(r)
		if e != 0 {
			n, err = 0, e
		}
	} else {
		n, err = unix.EpollWait(l.epfd, l.events, timeoutMs)
	}
	if err != nil && err != unix.EINTR {
		l.abandon(fmt.Errorf("bench: epoll_wait: %w", err))
		return 0
	}
	for _, ev := range l.events[:max(n, 0)] {
		switch ev.Fd {
		case tagWake:
			unix.Read(l.wakefd, l.scratch[:])
		case tagTimer:
			unix.Read(l.timerfd, l.scratch[:])
			l.armedNs = l.armAtNs
		default:
			c := l.conns[ev.Fd]
			if !c.done && c.outWait && ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.flush(c)
			}
			if !c.done && ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.readable(c)
			}
		}
	}
	return n
}

// readable reads once from c and takes every reply complete in its
// buffer, each timed at the read.
func (l *pacedLoop) readable(c *pacedConn) {
	rr := c.t.rr
	rr.makeRoom(0)
	n, e := rawRead(c.fd, rr.buf[rr.w:])
	nowNs := l.now()
	switch {
	case e == unix.EAGAIN || e == unix.EINTR:
		return
	case e != 0:
		l.failRecv(c, fmt.Errorf("read %s reply: %w", c.ring[c.head].op, closedErr(e)))
		return
	case n == 0:
		l.failRecv(c, fmt.Errorf("read %s reply: %w", c.ring[c.head].op, errServerClosed))
		return
	}
	if !rr.pushedBytes(n) {
		return
	}
	for c.n > 0 {
		e := c.ring[c.head]
		c.keys[0] = e.key
		rr.op = e.op
		ok, err := rr.tryReply(c.keys[:])
		if err != nil {
			l.failRecv(c, fmt.Errorf("read %s reply: %w", e.op, err))
			return
		}
		if !ok {
			return
		}
		c.t.done(e.stampNs, nowNs)
		if c.n == len(c.ring) {
			c.freedNs = nowNs
		}
		c.head = (c.head + 1) % len(c.ring)
		c.n--
	}
}

func (l *pacedLoop) failRecv(c *pacedConn, err error) {
	if c.t.recvErr == nil {
		c.t.recvErr = err
	}
	l.finish(c)
	l.onErr()
}

// finish ends c's run and takes it out of the epoll set.
func (l *pacedLoop) finish(c *pacedConn) {
	if c.done {
		return
	}
	c.done = true
	l.live--
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
}

// abandon ends every unfinished connection with err, owed replies and all.
func (l *pacedLoop) abandon(err error) {
	for _, c := range l.conns {
		if !c.done {
			l.failRecv(c, err)
		}
	}
}
