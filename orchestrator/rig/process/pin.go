package process

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/tierbench/tierbench/orchestrator/rig"

	"golang.org/x/sys/unix"
)

// Environment variables through which the process runtime asks a child
// tierbench to pin itself before it starts any work.
const (
	EnvPinCPUs = "TIERBENCH_PIN_CPUS"
	EnvPinMems = "TIERBENCH_PIN_MEMS"
)

// envPinExec, set to 1 beside the pin variables, asks the binary to run
// its first argument in its place once pinned, rather than itself: how the
// process runtime pins a server that is not tierbench (redis-server, a
// launcher script), which has no pinning of its own. Affinity and memory
// policy are inherited across execve and fork, so the server and anything
// it starts run pinned.
const envPinExec = "TIERBENCH_PIN_EXEC"

// mpolBind is MPOL_BIND of set_mempolicy(2).
const mpolBind = 2

// ExecPinnedChild is called first thing by the tierbench binary (from an
// init function). When the process runtime started this process with
// TIERBENCH_PIN_CPUS / TIERBENCH_PIN_MEMS, it binds the calling thread's
// CPU affinity and memory policy and re-executes the binary in place:
// both are inherited across execve, so every thread of the new image
// starts pinned, which setting them from outside after start cannot
// promise. Without those variables it returns at once.
func ExecPinnedChild() {
	cpus, mems := os.Getenv(EnvPinCPUs), os.Getenv(EnvPinMems)
	if cpus == "" && mems == "" {
		return
	}
	// Init functions run on the main thread; keep it there until execve.
	runtime.LockOSThread()
	if err := pinThread(cpus, mems); err != nil {
		fmt.Fprintf(os.Stderr, "tierbench: pin to cpus %q mems %q: %v\n", cpus, mems, err)
		os.Exit(1)
	}
	os.Unsetenv(EnvPinCPUs)
	os.Unsetenv(EnvPinMems)
	if os.Getenv(envPinExec) == "1" {
		os.Unsetenv(envPinExec)
		execPinned(os.Args[1:])
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	err = syscall.Exec(exe, os.Args, os.Environ())
	fmt.Fprintf(os.Stderr, "tierbench: re-exec %s after pinning: %v\n", exe, err)
	os.Exit(1)
}

// execPinned runs argv (its program looked up on PATH) in this pinned
// process's place; it returns only by exiting.
func execPinned(argv []string) {
	if len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "tierbench: %s=1 with no program to run\n", envPinExec)
		os.Exit(1)
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "tierbench: run %s pinned: %v\n", argv[0], err)
	os.Exit(1)
}

// pinThread sets the calling thread's CPU affinity and binds its memory
// policy to the given nodes.
func pinThread(cpus, mems string) error {
	if cpus != "" {
		list, err := rig.ParseCPUList(cpus)
		if err != nil {
			return err
		}
		var set unix.CPUSet
		for _, c := range list {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("sched_setaffinity %s: %w", cpus, err)
		}
	}
	if mems != "" {
		nodes, err := rig.ParseCPUList(mems)
		if err != nil {
			return err
		}
		var mask [16]uint64 // 1024 nodes
		for _, n := range nodes {
			if n >= len(mask)*64 {
				return fmt.Errorf("node %d is beyond %d", n, len(mask)*64)
			}
			mask[n/64] |= 1 << (n % 64)
		}
		// maxnode counts bits plus one, as numactl passes it.
		_, _, errno := unix.Syscall(unix.SYS_SET_MEMPOLICY, mpolBind,
			uintptr(unsafe.Pointer(&mask[0])), uintptr(len(mask)*64+1))
		if errno != 0 {
			return fmt.Errorf("set_mempolicy MPOL_BIND %s: %w", mems, errno)
		}
	}
	return nil
}
