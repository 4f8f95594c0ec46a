package testenv

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestChildOutlivesEndedThreads: goroutines that lock their thread and
// return end threads (as a test entering a network namespace does); a
// redis-server the harness started must not be killed by its Pdeathsig
// when one of them ends the thread the test started it from. The main
// thread never ends (the runtime parks a locked goroutine's main thread
// instead), so the test starts it from another one: it locks itself to
// its thread, and a subtest, which cannot run on a thread locked to
// another goroutine, does the work when that thread is the main one.
func TestChildOutlivesEndedThreads(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if unix.Gettid() != os.Getpid() {
		childOutlivesEndedThreads(t)
		return
	}
	t.Run("off the main thread", func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		childOutlivesEndedThreads(t)
	})
}

func childOutlivesEndedThreads(t *testing.T) {
	if unix.Gettid() == os.Getpid() {
		t.Fatal("still on the main thread")
	}
	forker := unix.Gettid()
	r := MustRedisServer(t)
	// From here the thread the test started redis-server from may run the
	// goroutines below and end with one of them.
	runtime.UnlockOSThread()
	ended := false
	for range 200 {
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			done <- unix.Gettid()
		}()
		ended = ended || <-done == forker
	}
	runtime.LockOSThread()
	select {
	case <-r.exited:
		t.Fatalf("redis-server on %s was killed when a thread of the test ended (the thread it was started from ended: %v):\n%s",
			r.Addr, ended, r.out.String())
	case <-time.After(200 * time.Millisecond):
	}
	MustWaitPing(t, r.Addr, 2*time.Second)
	t.Logf("the thread redis-server was started from ended: %v", ended)
}
