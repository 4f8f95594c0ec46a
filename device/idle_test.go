package device

import (
	"runtime"
	"testing"
)

// TestUringSubmitIdle: on an idle device a lone read completes inside
// SubmitIdle, on the caller's goroutine, with the right bytes; with
// another request in flight SubmitIdle is Submit, and the reaper delivers.
// Close afterwards still stops the reapers.
func TestUringSubmitIdle(t *testing.T) {
	d, u, c := openTwoRings(t)
	data := mustBuffer(t, 64<<10)
	stamp(data, 0)
	if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: data}); r.err != nil {
		t.Fatalf("write: %v", r.err)
	}
	buf := mustBuffer(t, 4096)
	inline := 0
	for i := range 20 {
		off := uint64(i%16) * 4096
		if n, err := u.SubmitIdle([]Request{{Op: OpRead, Offset: off, Buf: buf, UserData: uint64(i)}}); n != 1 || err != nil {
			t.Fatalf("SubmitIdle: %d, %v", n, err)
		}
		select {
		case r := <-c.ch:
			checkRead(t, r, i, buf, off)
			inline++
		default:
			// The reaper held the CQ lock at that moment: the plain path.
			if r := c.wait(t); r.err != nil || r.n != len(buf) {
				t.Fatalf("read %d through the reaper: %+v", i, r)
			}
		}
	}
	if inline < 10 {
		t.Errorf("%d of 20 lone reads on an idle device completed inside SubmitIdle, want most", inline)
	}
	// Busy: a second request in flight makes SubmitIdle plain Submit.
	other := mustBuffer(t, 4096)
	if _, err := d.Submit([]Request{{Op: OpRead, Offset: 8192, Buf: other, UserData: 100}}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.SubmitIdle([]Request{{Op: OpRead, Offset: 4096, Buf: buf, UserData: 101}}); err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for range 2 {
		r := c.wait(t)
		if r.err != nil || r.n != 4096 {
			t.Fatalf("%+v", r)
		}
		got[r.userData] = true
	}
	if !got[100] || !got[101] {
		t.Fatalf("completions %v, want 100 and 101", got)
	}
	if d.InFlight() != 0 {
		t.Fatalf("%d in flight after every completion", d.InFlight())
	}

	// One P: the wait would hold the only P and stall every other
	// goroutine, so a lone read takes the plain path. The reaper cannot
	// run before this goroutine blocks, so a completion found at once
	// came inside SubmitIdle.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 10 {
		if _, err := u.SubmitIdle([]Request{{Op: OpRead, Offset: 0, Buf: buf, UserData: uint64(200 + i)}}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-c.ch:
			t.Fatalf("GOMAXPROCS 1: read %d completed inside SubmitIdle (%+v), want it through the reaper", i, r)
		default:
		}
		if r := c.wait(t); r.err != nil || r.n != len(buf) {
			t.Fatalf("read %d through the reaper: %+v", i, r)
		}
	}
}
