package bench

import (
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// IdleNapAuto is Config.IdleNap's default: each event loop sizes its own
// naps from the waits it measures (see idleWait).
const IdleNapAuto time.Duration = -1

// Bounds of an automatic nap. minNap is about what a sleep costs to enter
// and leave, so a shorter one would only add system calls. napCeiling is
// the wait past which a loop parks at once rather than napping: a park
// costs the server one cross-CPU wake-up, a few µs, which is a small share
// of a wait this long, while a nap's lateness grows with its length (a
// step of a quarter nap, and a busy host runs a timer's wake-up late).
// maxNap bounds firstNap, which keeps following waits past napCeiling so
// the loop sees them shorten. firstNapStart is where a loop begins before
// it has measured anything.
const (
	minNap        = 2 * time.Microsecond
	napCeiling    = 40 * time.Microsecond
	maxNap        = time.Millisecond
	firstNapStart = 10 * time.Microsecond
	// parkAfter is how many first naps' worth of waiting a loop naps
	// through before it parks: replies this late mean the server is
	// stalled or the load has changed, not that a nap is a step short.
	parkAfter = 8
	// minParkBudget keeps a loop whose waits are a few µs from parking
	// on the first wait longer than usual.
	minParkBudget = 200 * time.Microsecond
	// oversleep is how far past its length a nap may end before the loop
	// asks the kernel for exact timers on its thread (timer slack).
	oversleep = 10 * time.Microsecond
)

// idleWait decides how an offline event loop waits when a poll finds
// nothing ready: nap on its own thread and poll again, or park until a
// reply wakes it (auto mode: blocked in the loop's own epoll_pwait, see
// blockMillis; a fixed IdleNap: in Go's netpoller, as before auto).
//
// Why nap at all: a parked loop is woken by the kernel on the CPU that
// delivers the reply, the server's, and on a virtual machine that
// cross-CPU wake-up is paid for by the server; a napping loop finds the
// replies itself and costs the server nothing. Why not always: a nap ends
// late by up to the step between polls, and later still when the host's
// CPUs are busy and the timer's wake-up waits its turn, which leaves the
// connection, and at few connections the server, idle; beside a long wait
// a park's wake-up is the cheaper of the two. Why not spin: a spinning
// loop burns the CPU a server on the same host could use, and its CPU per
// op. Why not a fixed nap: the best choice depends on the wait, which
// depends on the connections per loop, the batch, the pipeline, TLS and
// the server, so each loop measures it.
//
// In auto mode (Config.IdleNap == IdleNapAuto) firstNap tracks the wait
// for replies, and the loop naps only while it is below napCeiling; past
// it, every wait parks at once. While napping, the first nap after the
// loop goes idle is firstNap and further naps are a quarter of it (at
// least minNap) until a poll finds something. When the first poll after
// the first nap already finds replies, they may have waited, so firstNap
// shrinks by an eighth; when it took more naps, it moves a quarter of the
// way to three quarters of the measured wait. It thus settles where about
// half the waits end within the first nap, the replies read within a
// quarter of a nap of their arrival. Waiting past parkAfter first naps (at
// least minParkBudget) parks: the server is stalled or busy elsewhere. A
// park's wait moves firstNap half of the way to three quarters of it, but
// never past twice its length, so that one stall barely lengthens the
// naps after it, waits that are always long make the loop park at once,
// and a loop parking at once sees the waits shorten and naps again.
//
// A nap is a raw nanosleep, which keeps the goroutine's P: the runtime
// neither hands it off nor wakes another thread. The kernel may stretch a
// sleep by the thread's timer slack (50 µs by default), longer than the
// naps themselves; a nap seen ending more than oversleep late sets its
// thread's slack to 1 ns (PR_SET_TIMERSLACK), once per thread it runs on.
//
// With a fixed IdleNap the loop naps napStep at a time until IdleNap has
// passed since it went idle, then parks; 0 parks at once.
type idleWait struct {
	auto     bool
	budget   time.Duration // fixed mode: how long to nap before parking
	firstNap time.Duration // auto mode: the first nap's length

	since  time.Time // when the loop went idle; zero while busy
	naps   int       // naps in the current wait
	parked bool      // the current wait ended in a park

	stats idleStats
}

// idleStats counts how a loop's waits ended, for the cell's report.
type idleStats struct {
	Waits, Naps, Parks int64
	FirstNapNs         int64 // firstNap when the run ended
}

func newIdleWait(idleNap time.Duration) idleWait {
	return idleWait{auto: idleNap == IdleNapAuto, budget: idleNap, firstNap: firstNapStart}
}

// napStep is one nap's requested length with a fixed IdleNap.
const napStep = 20 * time.Microsecond

// again is called when a poll found nothing ready: it naps and reports
// true (poll again), or reports false (park until a reply wakes the loop).
func (w *idleWait) again() bool {
	now := time.Now()
	d, nap := w.next(now)
	if !nap {
		return false
	}
	ts := unix.NsecToTimespec(int64(d))
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0) // EINTR: the nap ends early, which is harmless
	if w.auto && time.Since(now) > d+oversleep {
		unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0)
	}
	return true
}

// next decides, at now, with nothing ready: a nap of d (nap true), or a
// park. It counts the wait, the nap or the park.
func (w *idleWait) next(now time.Time) (d time.Duration, nap bool) {
	if w.since.IsZero() {
		w.since, w.naps, w.parked = now, 0, false
		w.stats.Waits++
	}
	elapsed := now.Sub(w.since)
	if w.auto {
		if w.firstNap >= napCeiling || elapsed >= max(parkAfter*w.firstNap, minParkBudget) {
			return 0, w.park()
		}
		d = w.firstNap
		if w.naps > 0 {
			d = max(w.firstNap/4, minNap)
		}
	} else {
		if w.budget <= 0 || elapsed >= w.budget {
			return 0, w.park()
		}
		d = min(napStep, w.budget)
	}
	w.naps++
	w.stats.Naps++
	return d, true
}

// park marks the current wait as ended by parking and reports false.
func (w *idleWait) park() bool {
	if !w.parked {
		w.parked = true
		w.stats.Parks++
	}
	return false
}

// ready is called when a poll found something.
func (w *idleWait) ready() {
	if !w.since.IsZero() {
		w.readyAt(time.Now())
	}
}

// readyAt ends the current wait at now and, in auto mode, moves firstNap
// after it.
func (w *idleWait) readyAt(now time.Time) {
	if w.since.IsZero() {
		return
	}
	if w.auto {
		target := now.Sub(w.since) * 3 / 4
		switch {
		case w.parked:
			// A park's wait teaches at most half again as much, so that
			// one stall barely moves the naps and long waits still
			// lengthen them until the loop stops parking.
			w.firstNap += (min(target, 2*w.firstNap) - w.firstNap) / 2
		case w.naps == 1:
			w.firstNap -= w.firstNap / 8
		default:
			w.firstNap += (target - w.firstNap) / 4
		}
		w.firstNap = min(max(w.firstNap, minNap), maxNap)
		w.stats.FirstNapNs = int64(w.firstNap)
	}
	w.since = time.Time{}
}

// reportIdle fills the cell's idle-wait fields from its loops.
func reportIdle(res *CellResult, idleNap time.Duration, loops []*clientLoop) {
	switch {
	case idleNap == IdleNapAuto:
		res.IdleWait = "auto"
	case idleNap > 0:
		res.IdleWait, res.IdleNapMicros = "nap", float64(idleNap)/float64(time.Microsecond)
	default:
		res.IdleWait = "park"
	}
	firstNaps := make([]int64, 0, len(loops))
	for _, l := range loops {
		s := l.idle.stats
		res.IdleWaits += s.Waits
		res.IdleNaps += s.Naps
		res.IdleParks += s.Parks
		firstNaps = append(firstNaps, s.FirstNapNs)
	}
	if idleNap == IdleNapAuto && len(firstNaps) > 0 {
		slices.Sort(firstNaps)
		res.FirstNapMicros = float64(firstNaps[len(firstNaps)/2]) / float64(time.Microsecond)
	}
}
