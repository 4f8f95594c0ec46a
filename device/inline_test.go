package device

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInlineCompletion checks the localmemory device with InlineCompletion:
// every accepted request is completed on the submitting goroutine before
// Submit returns (the completions land in a plain slice, which the race
// detector would flag if another goroutine wrote it), with the bytes that
// were written, and each failure is the error the other backends give.
func TestInlineCompletion(t *testing.T) {
	const segBytes = 64 << 10
	var got []result
	d := openTest(t, Config{Backend: BackendLocalMemory, SegmentBytes: segBytes, SectorSize: 512, InlineCompletion: true,
		OnComplete: func(ud uint64, n int, err error) { got = append(got, result{ud, n, err}) }})
	src := mustBuffer(t, 8192)
	stamp(src, 0)
	if n, err := d.Submit([]Request{{Op: OpWrite, Offset: 0, Buf: src, UserData: 99}}); n != 1 || err != nil {
		t.Fatalf("Submit(write): got (%d, %v), want (1, nil)", n, err)
	}
	if len(got) != 1 || got[0] != (result{99, 8192, nil}) {
		t.Fatalf("completions when Submit(write) returned: got %+v, want [{99 8192 <nil>}]", got)
	}
	bufs := mustBuffer(t, 6*1024)
	reqs := []Request{
		{Op: OpRead, Offset: 0, Buf: bufs[0:512], UserData: 0},
		{Op: OpRead, Offset: 4096, Buf: bufs[1024:2048], UserData: 1},
		{Op: OpRead, Offset: 7680, Buf: bufs[2048:3072], UserData: 2},     // half of it was written
		{Op: OpRead, Offset: 8192, Buf: bufs[3072:3584], UserData: 3},     // nothing written there
		{Op: OpRead, Offset: segBytes, Buf: bufs[4096:4608], UserData: 4}, // a segment never written
	}
	want := []struct {
		n   int
		err error
	}{{512, nil}, {1024, nil}, {512, ErrShortIO}, {0, ErrPastEnd}, {0, ErrPastEnd}}
	got = got[:0]
	if n, err := d.Submit(reqs); n != len(reqs) || err != nil {
		t.Fatalf("Submit(%d reads): got (%d, %v), want (%d, nil)", len(reqs), n, err, len(reqs))
	}
	if len(got) != len(reqs) {
		t.Fatalf("completions when Submit returned: got %d, want %d", len(got), len(reqs))
	}
	for i, r := range got {
		if r.userData != uint64(i) || r.n != want[i].n || !errors.Is(r.err, want[i].err) || (want[i].err == nil) != (r.err == nil) {
			t.Errorf("read %d: got (ud %d, n %d, %v), want (ud %d, n %d, %v)", i, r.userData, r.n, r.err, i, want[i].n, want[i].err)
		}
	}
	for _, i := range []int{0, 1} {
		if m := firstMismatch(reqs[i].Buf, reqs[i].Offset); m >= 0 {
			t.Errorf("read %d at %d: byte %d differs from what was written", i, reqs[i].Offset, m)
		}
	}
	// A refused request ends the batch: the ones before it completed, it
	// and the rest get no completion.
	got = got[:0]
	bad := []Request{reqs[0], {Op: OpRead, Offset: 100, Buf: bufs[:512], UserData: 7}, reqs[1]}
	if n, err := d.Submit(bad); n != 1 || !errors.Is(err, ErrUnaligned) {
		t.Errorf("Submit with an unaligned second request: got (%d, %v), want (1, ErrUnaligned)", n, err)
	}
	if len(got) != 1 || got[0].userData != 0 {
		t.Errorf("completions of the refused batch: got %+v, want only user data 0", got)
	}
	if n := d.InFlight(); n != 0 {
		t.Errorf("InFlight after Submit returned: got %d, want 0", n)
	}
	if s := d.(Describer).Describe(); !bytes.Contains([]byte(s), []byte("inline")) {
		t.Errorf("Describe: got %q, want it to say inline", s)
	}
	allocs := testing.AllocsPerRun(200, func() { d.Submit(reqs[:2]); got = got[:0] })
	if allocs != 0 {
		t.Errorf("allocations per inline Submit of 2 reads: got %v, want 0", allocs)
	}
}

// TestCloseWhileSubmitting closes a localmemory device while several
// goroutines submit to it, inline and with completion goroutines behind a
// throttle small enough that submitters wait for slots: no copy may run on
// an unmapped segment, every Submit either has its requests completed or
// returns ErrClosed (a submitter waiting for a slot included), every
// accepted request is completed by the time Close returns, and Submit after
// Close returns ErrClosed.
func TestCloseWhileSubmitting(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			var completed atomic.Int64
			d, err := Open(Config{Backend: BackendLocalMemory, SegmentBytes: 1 << 20, SectorSize: 512, InlineCompletion: inline,
				ThrottleLimit: 4, CompletionThreads: 3,
				OnComplete: func(_ uint64, _ int, err error) {
					if err == nil {
						completed.Add(1)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			buf := mustBuffer(t, 4*4096)
			written := completed.Load() + 1
			if _, err := d.Submit([]Request{{Op: OpWrite, Offset: 0, Buf: buf}}); err != nil {
				t.Fatal(err)
			}
			for completed.Load() != written {
				time.Sleep(time.Millisecond)
			}
			var wg sync.WaitGroup
			var accepted atomic.Int64
			start := make(chan struct{})
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reqs := []Request{{Op: OpRead, Offset: uint64(g) * 4096, Buf: buf[g*4096 : g*4096+512], UserData: uint64(g) << 32},
						{Op: OpRead, Offset: 512, Buf: buf[g*4096+512 : g*4096+1024], UserData: uint64(g) << 32}}
					<-start
					submitUntilClosed(t, d, reqs, &accepted)
				}()
			}
			close(start)
			time.Sleep(20 * time.Millisecond)
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if a, c := accepted.Load(), completed.Load()-1; a == 0 || a > c {
				t.Errorf("when Close returned: reads accepted %d, completed without error %d: want every accepted one completed", a, c)
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("submitters still blocked 10 s after Close")
			}
			if a, c := accepted.Load(), completed.Load()-1; a != c {
				t.Errorf("reads accepted %d, completed without error %d: want equal", a, c)
			}
			if _, err := d.Submit([]Request{{Op: OpRead, Offset: 0, Buf: buf[:512]}}); !errors.Is(err, ErrClosed) {
				t.Errorf("Submit after Close: got %v, want ErrClosed", err)
			}
		})
	}
}

// TestBenchInline runs the benchmark's inline loop on localmemory with
// verification: reads happen, none fails, and the queue depth is kept.
func TestBenchInline(t *testing.T) {
	cfg := BenchConfig{Backend: BackendLocalMemory, FileBytes: 4 << 20, Files: 2, BlockBytes: 1024, Threads: 2,
		QueueDepth: 8, RuntimeSeconds: 1, Verify: true, InlineCompletion: true}
	res, err := Bench(context.Background(), cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("Bench: %v", err)
	}
	if res.Ops == 0 || res.Errors != 0 || res.VerifyFailures != 0 {
		t.Fatalf("got %d ops, %d errors (%d verification), first error %q; want ops and no errors",
			res.Ops, res.Errors, res.VerifyFailures, res.FirstError)
	}
	if res.MaxInFlight < int64(cfg.QueueDepth) || res.MaxInFlight > int64(cfg.Threads*cfg.QueueDepth) {
		t.Errorf("max in flight: got %d, want between %d and %d", res.MaxInFlight, cfg.QueueDepth, cfg.Threads*cfg.QueueDepth)
	}
	if res.Seconds < 0.9 || res.Seconds > 1.5 {
		t.Errorf("timed window: got %.2f s, want about the 1 s asked", res.Seconds)
	}
}

// TestSlotPool takes and returns slots from several goroutines at once,
// one at a time and several with one swap (popUpTo, pushAll), on one stack
// and on several (each taker returning its slots to a stack
// other than the one it took them from, so that slots move between them):
// no index may be held by two takers at a time, every index comes back,
// a taker blocked on an empty pool is woken by a return to any stack, and
// one blocked after it is emptied again gives up when the pool is closed.
func TestSlotPool(t *testing.T) {
	for _, stacks := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d stacks", stacks), func(t *testing.T) {
			const n, takers, rounds = 8, 6, 2000
			p := newSlotPool(n, stacks)
			var held [n]atomic.Int32
			var wg sync.WaitGroup
			for g := range takers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						var got [3]uint32
						taken := 1
						switch (g + r) % 3 {
						case 0:
							var ok bool
							if got[0], ok = p.popWait(g % stacks); !ok {
								t.Errorf("popWait on an open pool gave up")
								return
							}
						case 1:
							var ok bool
							if got[0], ok = p.pop(g % stacks); !ok {
								continue
							}
						default:
							if taken = p.popUpTo(g%stacks, got[:1+r%3]); taken == 0 {
								continue
							}
						}
						for _, idx := range got[:taken] {
							if idx >= n {
								t.Errorf("popped index %d, want below %d", idx, n)
								return
							}
							if c := held[idx].Add(1); c != 1 {
								t.Errorf("index %d held by %d takers at once, want 1", idx, c)
							}
						}
						for _, idx := range got[:taken] {
							held[idx].Add(-1)
						}
						if taken == 1 {
							p.push((g+r)%stacks, got[0])
						} else {
							p.pushAll((g+r)%stacks, got[:taken])
						}
					}
				}()
			}
			wg.Wait()
			seen := map[uint32]bool{}
			for {
				idx, ok := p.pop(0)
				if !ok {
					break
				}
				if seen[idx] {
					t.Fatalf("index %d twice in the drained pool", idx)
				}
				seen[idx] = true
			}
			if len(seen) != n {
				t.Fatalf("indexes after the run: got %d, want %d", len(seen), n)
			}
			woke := make(chan uint32)
			go func() {
				idx, _ := p.popWait(0)
				woke <- idx
			}()
			select {
			case idx := <-woke:
				t.Fatalf("popWait on an empty pool returned %d, want it to wait", idx)
			case <-time.After(20 * time.Millisecond):
			}
			p.push(stacks-1, 3)
			select {
			case idx := <-woke:
				if idx != 3 {
					t.Errorf("popWait after push(3): got %d, want 3", idx)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("popWait was not woken by a push")
			}
			gaveUp := make(chan bool)
			go func() {
				_, ok := p.popWait(0)
				gaveUp <- !ok
			}()
			time.Sleep(20 * time.Millisecond) // let it wait, most of the time
			p.close()
			select {
			case g := <-gaveUp:
				if !g {
					t.Errorf("popWait on an empty closed pool returned an index, want none")
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("popWait on an empty pool was not released by close")
			}
			p.push(0, 3)
			if idx, ok := p.popWait(0); !ok || idx != 3 {
				t.Errorf("popWait on a closed pool holding 3: got (%d, %v), want (3, true)", idx, ok)
			}
		})
	}
}

// TestCloseReleasesWaitingSubmitter: a Submit that waits for a slot when
// Close starts returns ErrClosed at once, with the requests it had already
// queued accepted, instead of waiting for a slot that Close takes; and
// Close returns once the requests holding slots have been completed.
func TestCloseReleasesWaitingSubmitter(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var completed atomic.Int64
	d, err := Open(Config{Backend: BackendLocalMemory, SegmentBytes: 1 << 20, SectorSize: 512, ThrottleLimit: 2, CompletionThreads: 1,
		OnComplete: func(ud uint64, _ int, err error) {
			if err != nil {
				t.Errorf("request %d: %v", ud, err)
			}
			if ud == 1 {
				close(entered)
				<-release
			}
			completed.Add(1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	buf := mustBuffer(t, 4*512)
	write := func(i int) Request {
		return Request{Op: OpWrite, Offset: uint64(i) * 512, Buf: buf[i*512 : (i+1)*512], UserData: uint64(i + 1)}
	}
	if n, err := d.Submit([]Request{write(0)}); n != 1 || err != nil {
		t.Fatalf("Submit of 1 write: got (%d, %v)", n, err)
	}
	// The first completion blocks its goroutine with its slot back in the
	// pool; the second write then waits in the queue, holding a slot.
	<-entered
	if n, err := d.Submit([]Request{write(1)}); n != 1 || err != nil {
		t.Fatalf("Submit of the second write: got (%d, %v)", n, err)
	}
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	go func() {
		n, err := d.Submit([]Request{write(2), write(3)})
		got <- result{n, err}
	}()
	time.Sleep(20 * time.Millisecond) // let it wait for the second slot, most of the time
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case r := <-got:
		if !errors.Is(r.err, ErrClosed) || r.n > 1 {
			t.Errorf("Submit waiting for a slot during Close: got (%d, %v), want (0 or 1, ErrClosed)", r.n, r.err)
		}
		defer func() {
			if c := completed.Load(); c != int64(2+r.n) {
				t.Errorf("completions when Close returned: got %d, want %d", c, 2+r.n)
			}
		}()
	case <-time.After(5 * time.Second):
		t.Fatal("a Submit waiting for a slot was not released by Close within 5 s")
	}
	close(release)
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s of the last completion")
	}
}
