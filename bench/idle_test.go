package bench

import (
	"testing"
	"time"
)

// TestFixedIdleNapNapsThenParks checks a fixed IdleNap: with nothing
// ready a loop naps napStep at a time until IdleNap has passed since it
// went idle, then parks, and starts afresh after the next reply; IdleNap 0
// parks at once.
func TestFixedIdleNapNapsThenParks(t *testing.T) {
	for _, tc := range []struct {
		budget   time.Duration
		wantNaps int
	}{{0, 0}, {50 * time.Microsecond, 3}, {300 * time.Microsecond, 15}} {
		t.Run(tc.budget.String(), func(t *testing.T) {
			w := newIdleWait(tc.budget)
			now := time.Unix(0, 0)
			for round := range 2 {
				naps := 0
				for {
					d, nap := w.next(now)
					if !nap {
						break
					}
					if d != min(napStep, tc.budget) {
						t.Fatalf("round %d: a nap of %v, want %v", round, d, min(napStep, tc.budget))
					}
					naps++
					now = now.Add(d)
				}
				if naps != tc.wantNaps {
					t.Errorf("round %d: %d naps before parking, want %d", round, naps, tc.wantNaps)
				}
				now = now.Add(time.Millisecond)
				w.readyAt(now)
			}
			if got, want := w.stats, (idleStats{Waits: 2, Naps: int64(2 * tc.wantNaps), Parks: 2}); got != want { // FirstNapNs: auto only
				t.Errorf("stats %+v, want %+v", got, want)
			}
		})
	}
}

// simulateAuto runs rounds waits of an auto loop whose replies arrive
// arrive after it goes idle, each nap lasting its length plus late, and
// returns the loop.
func simulateAuto(rounds int, arrive func(round int) time.Duration, late time.Duration) *idleWait {
	w := newIdleWait(IdleNapAuto)
	now := time.Unix(0, 0)
	for round := range rounds {
		start := now
		due := start.Add(arrive(round))
		for now.Before(due) {
			d, nap := w.next(now)
			if !nap {
				now = due.Add(late) // parked: woken by the reply
				break
			}
			now = now.Add(d + late)
		}
		w.readyAt(now)
		now = now.Add(10 * time.Microsecond) // busy with the replies
	}
	return &w
}

// TestAutoNapFollowsTheWait checks that an auto loop's first nap settles
// near the wait for replies whatever that wait is, within its bounds; that
// short waits are napped through with few naps each and that long ones
// (past napCeiling) park at once.
func TestAutoNapFollowsTheWait(t *testing.T) {
	for _, tc := range []struct {
		wait        time.Duration
		low, hi     time.Duration
		maxNapsWait float64 // naps per wait
		parks       bool    // settled waits park
	}{
		{1 * time.Microsecond, minNap, minNap, 1, false},
		{8 * time.Microsecond, 4 * time.Microsecond, 10 * time.Microsecond, 3, false},
		{40 * time.Microsecond, 20 * time.Microsecond, napCeiling, 3, false},
		{120 * time.Microsecond, 80 * time.Microsecond, 100 * time.Microsecond, 0.5, true}, // naps while it learns
		{3 * time.Millisecond, maxNap, maxNap, 0.6, true},
	} {
		t.Run(tc.wait.String(), func(t *testing.T) {
			const rounds = 400
			w := simulateAuto(rounds, func(int) time.Duration { return tc.wait }, 0)
			if w.firstNap < tc.low || w.firstNap > tc.hi {
				t.Errorf("first nap %v after waits of %v, want %v..%v", w.firstNap, tc.wait, tc.low, tc.hi)
			}
			if got := float64(w.stats.Naps) / float64(w.stats.Waits); got > tc.maxNapsWait {
				t.Errorf("%.2f naps per wait of %v, want at most %v", got, tc.wait, tc.maxNapsWait)
			}
			if parks := w.stats.Parks; tc.parks && parks < rounds*9/10 || !tc.parks && parks != 0 {
				t.Errorf("%d parks in %d waits of %v, want parks %v", parks, rounds, tc.wait, tc.parks)
			}
		})
	}
}

// TestAutoNapReturnsWhenWaitsShorten checks that a loop parking at once
// (long waits) naps again once the waits become short.
func TestAutoNapReturnsWhenWaitsShorten(t *testing.T) {
	const long, short, at = 300 * time.Microsecond, 10 * time.Microsecond, 200
	w := simulateAuto(at+100, func(round int) time.Duration {
		return map[bool]time.Duration{true: long, false: short}[round < at]
	}, 0)
	if w.firstNap > 2*short {
		t.Errorf("first nap %v 100 waits of %v after waits of %v: want at most %v", w.firstNap, short, long, 2*short)
	}
	before := w.stats
	for range 20 {
		start := time.Unix(0, 0).Add(time.Hour)
		now := start
		for now.Sub(start) < short {
			d, nap := w.next(now)
			if !nap {
				t.Fatalf("parked %v into a wait of %v, want naps", now.Sub(start), short)
			}
			now = now.Add(d)
		}
		w.readyAt(now)
	}
	if w.stats.Parks != before.Parks {
		t.Errorf("%d parks in short waits, want none", w.stats.Parks-before.Parks)
	}
}

// TestAutoNapIgnoresAStall checks that one wait far longer than usual (a
// server stall) parks the loop, lengthens its first nap by at most half,
// and that a few usual waits bring it back.
func TestAutoNapIgnoresAStall(t *testing.T) {
	const usual, stall, at = 30 * time.Microsecond, 20 * time.Millisecond, 250
	calm := simulateAuto(at, func(int) time.Duration { return usual }, 0)
	justStalled := simulateAuto(at+1, func(round int) time.Duration {
		return map[bool]time.Duration{true: stall, false: usual}[round == at]
	}, 0)
	stalled := simulateAuto(at+50, func(round int) time.Duration {
		return map[bool]time.Duration{true: stall, false: usual}[round == at]
	}, 0)
	if justStalled.stats.Parks != calm.stats.Parks+1 {
		t.Errorf("%d parks with a stall, %d without: want exactly one more", justStalled.stats.Parks, calm.stats.Parks)
	}
	if got, limit := justStalled.firstNap, calm.firstNap*3/2; got > limit {
		t.Errorf("first nap %v right after a stall, %v before: want at most %v", got, calm.firstNap, limit)
	}
	if got, limit := stalled.firstNap, calm.firstNap*11/10; got > limit {
		t.Errorf("first nap %v 49 usual waits after a stall, %v before: want at most %v", got, calm.firstNap, limit)
	}
}

// TestAutoNapWithLateTimers checks that naps that end late (timer slack
// before the loop's thread drops it, a busy host) still leave the first
// nap below the wait rather than growing with the lateness.
func TestAutoNapWithLateTimers(t *testing.T) {
	const wait, late = 30 * time.Microsecond, 5 * time.Microsecond
	w := simulateAuto(400, func(int) time.Duration { return wait }, late)
	if w.firstNap > wait {
		t.Errorf("first nap %v with waits of %v and naps %v late: want at most the wait", w.firstNap, wait, late)
	}
	if w.stats.Parks != 0 {
		t.Errorf("%d parks: want none, every reply came within the budget", w.stats.Parks)
	}
}

// TestIdleWaitReadyWithoutWait checks that a poll finding replies at once
// (no wait begun) changes nothing.
func TestIdleWaitReadyWithoutWait(t *testing.T) {
	w := newIdleWait(IdleNapAuto)
	w.readyAt(time.Unix(0, 0))
	if w.firstNap != firstNapStart || w.stats != (idleStats{}) {
		t.Errorf("after a ready with no wait: first nap %v, stats %+v; want %v and none", w.firstNap, w.stats, firstNapStart)
	}
}
