package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
