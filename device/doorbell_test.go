package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestIdleReapersHoldNoThread: once the device is idle, no thread of the
// process is blocked in io_getevents or io_uring_enter. A reaper waiting
// in such a syscall keeps its P (the runtime's scheduling slot) until the
// runtime's monitor retakes it, and the goroutines its completions readied
// wait meanwhile; waiting on the doorbell it holds neither P nor thread.
func TestIdleReapersHoldNoThread(t *testing.T) {
	for _, backend := range []string{BackendLibaio, BackendUring} {
		t.Run(backend, func(t *testing.T) {
			c := newCollector(4)
			d := openTest(t, Config{Backend: backend, SegmentBytes: 1 << 20, SectorSize: 512, CompletionThreads: 2, OnComplete: c.onComplete})
			buf := mustBuffer(t, 4096)
			stamp(buf, 0)
			if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: buf, UserData: 1}); r.err != nil {
				t.Fatalf("write: %v", r.err)
			}
			if r := submitWait(t, d, c, Request{Op: OpRead, Offset: 0, Buf: buf, UserData: 2}); r.err != nil || firstMismatch(buf, 0) >= 0 {
				t.Fatalf("read back: %v, mismatch at %d", r.err, firstMismatch(buf, 0))
			}
			var blocked []string
			for deadline := time.Now().Add(2 * time.Second); ; {
				blocked = threadsIn(t, unix.SYS_IO_GETEVENTS, unix.SYS_IO_URING_ENTER)
				if len(blocked) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(blocked) > 0 {
				t.Errorf("idle %s device: got threads %s waiting in the kernel for completions, want none (reapers wait on their doorbell)", backend, strings.Join(blocked, ", "))
			}
		})
	}
}

// threadsIn lists this process's threads (as "tid in syscall N") that are
// in one of the given syscalls, from /proc/self/task/*/syscall, whose first
// field is the syscall's number while a thread is in one. The kernel's own
// io_uring workers (comm iou-wrk-*, iou-sqp-*) are tasks of the process
// too, born inside io_uring_enter: they are not ours and are left out.
func threadsIn(t *testing.T, nrs ...uintptr) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/syscall")
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, path := range tasks {
		if comm, err := os.ReadFile(filepath.Join(filepath.Dir(path), "comm")); err == nil && strings.HasPrefix(string(comm), "iou-") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended
		}
		nr, err := strconv.ParseUint(strings.Fields(string(b) + " x")[0], 10, 64)
		if err != nil {
			continue // "running"
		}
		for _, want := range nrs {
			if uintptr(nr) == want {
				in = append(in, fmt.Sprintf("%s in syscall %d", filepath.Base(filepath.Dir(path)), nr))
			}
		}
	}
	return in
}

// TestDoorbellWaitUntil plays ping-pong through the bell: another
// goroutine moves a shared count one step and rings once, then waits for
// the waiter's acknowledgement before the next step, while the waiter
// waits for each step with waitUntil, which never resets the counter. Each
// step has a single ring, so one lost between the check and the wait
// leaves the waiter parked for good, and the test fails on its deadline.
// The first wait finds its condition already true (rung before the wait
// began) and must return at once, and a wait must not allocate.
func TestDoorbellWaitUntil(t *testing.T) {
	b, err := newDoorbell()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	var count, want atomic.Int64
	reached := func(uintptr) bool { return count.Load() >= want.Load() }

	want.Store(1)
	count.Store(1)
	if err := b.ring(); err != nil {
		t.Fatal(err)
	}
	if err := b.waitUntil(reached); err != nil {
		t.Fatalf("waitUntil with the condition already true: %v", err)
	}

	const steps = 3000
	acks := make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		for i := int64(2); i <= steps; i++ {
			count.Store(i)
			if err := b.ring(); err != nil {
				errs <- err
				return
			}
			if _, ok := <-acks; !ok {
				return
			}
		}
	}()
	go func() {
		defer close(acks)
		for w := int64(2); w <= steps; w++ {
			want.Store(w)
			if err := b.waitUntil(reached); err != nil {
				errs <- fmt.Errorf("waitUntil(count ≥ %d): %w", w, err)
				return
			}
			acks <- struct{}{}
		}
		errs <- nil
	}()
	select {
	case err := <-errs:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("waitUntil still waiting after 30 s: count %d, waiting for %d (a ring was lost)", count.Load(), want.Load())
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = b.waitUntil(reached) }); allocs != 0 {
		t.Errorf("waitUntil with the condition true: got %.0f allocations, want 0", allocs)
	}
}
