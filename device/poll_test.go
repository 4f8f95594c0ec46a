package device

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pollFor calls Poll until it completes something or c holds a
// completion a reaper delivered instead (a stop-the-world or a preemption
// can let one run), entering the kernel between calls: with COOP_TASKRUN
// a read's CQE is posted only when the thread that submitted it next
// makes a syscall. It returns what the last Poll completed.
func pollFor(t *testing.T, p Poller, c *collector) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n := p.Poll(); n > 0 || len(c.ch) > 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing completed within 10 s")
		}
		unix.Getppid()
	}
}

// TestPoll: on each backend that polls, a goroutine that polls takes its
// own read's completion with the right bytes, on its own goroutine, while
// the reapers cannot run; it allocates nothing doing so; polling beside
// the reapers completes every request exactly once; after Close, Poll
// does nothing.
func TestPoll(t *testing.T) {
	for _, backend := range []string{BackendUring, BackendLibaio, BackendLocalMemory} {
		t.Run(backend, func(t *testing.T) { testPoll(t, backend) })
	}
}

func testPoll(t *testing.T, backend string) {
	c := newCollector(16)
	d := openTest(t, Config{Backend: backend, IOContexts: 2, SegmentBytes: 256 << 10, SectorSize: 512, OnComplete: c.onComplete})
	u, ok := d.(Poller)
	if !ok {
		t.Fatalf("the %s device is not a Poller", backend)
	}
	data := mustBuffer(t, 64<<10)
	stamp(data, 0)
	if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: data}); r.err != nil {
		t.Fatalf("write: %v", r.err)
	}
	buf := mustBuffer(t, 4096)

	// One P, held by this goroutine while it polls: the reapers, parked
	// in the netpoller, cannot take the CQE first.
	runtime.LockOSThread()
	prev := runtime.GOMAXPROCS(1)
	polled := 0
	for i := range 16 {
		off := uint64(i) * 4096
		if n, err := d.Submit([]Request{{Op: OpRead, Offset: off, Buf: buf, UserData: uint64(i)}}); n != 1 || err != nil {
			t.Fatalf("Submit: %d, %v", n, err)
		}
		got := pollFor(t, u, c)
		if got > 1 {
			t.Fatalf("read %d: Poll completed %d, want 1", i, got)
		}
		polled += got
		checkRead(t, c.wait(t), i, buf, off)
	}
	req := []Request{{Op: OpRead, Offset: 0, Buf: buf}}
	allocs := testing.AllocsPerRun(50, func() {
		d.Submit(req)
		pollFor(t, u, c)
		<-c.ch
	})
	runtime.GOMAXPROCS(prev)
	runtime.UnlockOSThread()
	if polled < 12 {
		t.Errorf("Poll completed %d of 16 lone reads on one P, want most", polled)
	}
	if allocs != 0 {
		t.Errorf("Submit and Poll of one read: %.1f allocations, want 0", allocs)
	}
	if n := u.Poll(); n != 0 {
		t.Errorf("Poll with nothing in flight: completed %d, want 0", n)
	}

	// Beside the reapers: every read completes once, whoever takes it.
	// The last count is the write that gives a localmemory device its
	// bytes (a file backend's are the files of d).
	const reads = 4000
	counts := make([]atomic.Int32, reads+1)
	var failed atomic.Int32
	var outstanding sync.WaitGroup
	busy := openTest(t, Config{Backend: backend, IOContexts: 2, SegmentBytes: 256 << 10, SectorSize: 512, Dir: dirOf(d),
		OnComplete: func(ud uint64, n int, err error) {
			if err != nil || (n != 512 && ud != reads) {
				failed.Add(1)
			}
			counts[ud].Add(1)
			outstanding.Done()
		}})
	if backend == BackendLocalMemory {
		outstanding.Add(1)
		if n, err := busy.Submit([]Request{{Op: OpWrite, Offset: 0, Buf: data, UserData: reads}}); n != 1 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		outstanding.Wait()
	}
	stop := make(chan struct{})
	var busyPolled atomic.Int64
	var poller sync.WaitGroup
	poller.Add(1)
	go func() {
		defer poller.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			busyPolled.Add(int64(busy.(Poller).Poll()))
			unix.Getppid()
		}
	}()
	one := mustBuffer(t, 512)
	batch := make([]Request, 32)
	for first := 0; first < reads; first += len(batch) {
		for i := range batch {
			// Reads only: they may share a buffer.
			batch[i] = Request{Op: OpRead, Offset: uint64((first+i)%128) * 512, Buf: one, UserData: uint64(first + i)}
		}
		outstanding.Add(len(batch))
		if n, err := busy.Submit(batch); n != len(batch) || err != nil {
			t.Fatalf("Submit: %d, %v", n, err)
		}
	}
	outstanding.Wait()
	close(stop)
	poller.Wait()
	for ud := range counts[:reads] {
		if got := counts[ud].Load(); got != 1 {
			t.Fatalf("read %d completed %d times, want once", ud, got)
		}
	}
	if failed.Load() != 0 {
		t.Errorf("%d reads failed or came back short", failed.Load())
	}
	// The completion goroutines of localmemory take a queue within
	// nanoseconds, so a poller beside them may find none.
	if busyPolled.Load() == 0 && backend != BackendLocalMemory {
		t.Errorf("the poller completed none of %d reads, want some", reads)
	}
	t.Logf("the poller completed %d of %d reads, the reapers the rest", busyPolled.Load(), reads)

	if err := busy.Close(); err != nil {
		t.Fatal(err)
	}
	if n := busy.(Poller).Poll(); n != 0 {
		t.Errorf("Poll after Close: completed %d, want 0", n)
	}
}
