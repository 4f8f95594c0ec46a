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

// TestInlineCloseWhileSubmitting closes an inline device while several
// goroutines submit to it: no copy may run on an unmapped segment, every
// Submit either completes its requests or returns ErrClosed, and Submit
// after Close returns ErrClosed.
func TestInlineCloseWhileSubmitting(t *testing.T) {
	var completed atomic.Int64
	d, err := Open(Config{Backend: BackendLocalMemory, SegmentBytes: 1 << 20, SectorSize: 512, InlineCompletion: true,
		OnComplete: func(_ uint64, _ int, err error) {
			if err == nil {
				completed.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	buf := mustBuffer(t, 4*4096)
	if _, err := d.Submit([]Request{{Op: OpWrite, Offset: 0, Buf: buf}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var accepted atomic.Int64
	start := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reqs := []Request{{Op: OpRead, Offset: uint64(g) * 4096, Buf: buf[g*4096 : g*4096+512]},
				{Op: OpRead, Offset: 512, Buf: buf[g*4096+512 : g*4096+1024]}}
			<-start
			for {
				n, err := d.Submit(reqs)
				accepted.Add(int64(n))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Submit: got %v, want nil or ErrClosed", err)
					return
				}
			}
		}()
	}
	close(start)
	time.Sleep(20 * time.Millisecond)
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wg.Wait()
	if a, c := accepted.Load(), completed.Load()-1; a == 0 || a != c {
		t.Errorf("reads accepted %d, completed without error %d: want equal and above zero", a, c)
	}
	if _, err := d.Submit([]Request{{Op: OpRead, Offset: 0, Buf: buf[:512]}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: got %v, want ErrClosed", err)
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

// TestSlotPool takes and returns slots from several goroutines at once, on
// one stack and on several (each taker returning its slots to a stack
// other than the one it took them from, so that slots move between them):
// no index may be held by two takers at a time, every index comes back,
// and a taker blocked on an empty pool is woken by a
// return to any stack.
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
						var idx uint32
						if (g+r)%2 == 0 {
							idx = p.popWait(g % stacks)
						} else {
							var ok bool
							if idx, ok = p.pop(g % stacks); !ok {
								continue
							}
						}
						if idx >= n {
							t.Errorf("popped index %d, want below %d", idx, n)
							return
						}
						if c := held[idx].Add(1); c != 1 {
							t.Errorf("index %d held by %d takers at once, want 1", idx, c)
						}
						held[idx].Add(-1)
						p.push((g+r)%stacks, idx)
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
			go func() { woke <- p.popWait(0) }()
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
		})
	}
}
