package hostcheck

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/tierbench/tierbench/device"
	"golang.org/x/sys/unix"
)

// AIONeed is the number of fs.aio-max-nr events the planned run takes: the
// larger of what a raw device benchmark needs (every thread keeps queueDepth
// reads in flight, each in its own context) and what the tiered server's
// libaio device sets up with its default contexts and throttle
// (device.AIOEventsNeeded).
func AIONeed(threads, queueDepth int) int {
	server := device.AIOEventsNeeded(device.Config{Backend: device.BackendLibaio})
	if threads <= 0 || queueDepth <= 0 {
		return server
	}
	return max(threads*queueDepth, server)
}

// AIOBudget is the host-wide async-IO event budget.
type AIOBudget struct {
	MaxNr int64 `json:"aio_max_nr"` // fs.aio-max-nr
	Nr    int64 `json:"aio_nr"`     // fs.aio-nr, events held by live contexts
}

func (t tree) readAIO() (AIOBudget, error) {
	max, err := t.int64("/proc/sys/fs/aio-max-nr")
	if err != nil {
		return AIOBudget{}, err
	}
	nr, err := t.int64("/proc/sys/fs/aio-nr")
	if err != nil {
		return AIOBudget{}, err
	}
	if max < 0 || nr < 0 {
		return AIOBudget{}, fmt.Errorf("read /proc/sys/fs/aio-max-nr %d and aio-nr %d: negative", max, nr)
	}
	return AIOBudget{MaxNr: max, Nr: nr}, nil
}

// aioCheck fails when the events still free (aio-max-nr − aio-nr) are fewer
// than the largest planned thread count needs, and names the sysctl line
// that makes room: the need plus what is in use, rounded up to a power of two.
func aioCheck(b AIOBudget, err error, threads []int, queueDepth int) Check {
	if err != nil {
		return Check{Name: CheckAIOMaxNr, Status: Fail, Detail: err.Error()}
	}
	maxThreads := slices.Max(threads)
	need := int64(AIONeed(maxThreads, queueDepth))
	free := b.MaxNr - b.Nr
	detail := fmt.Sprintf("fs.aio-max-nr = %d, fs.aio-nr = %d in use; need %d (the larger of %d threads × queue depth %d and the server's libaio contexts × throttle, %d)",
		b.MaxNr, b.Nr, need, maxThreads, queueDepth, device.AIOEventsNeeded(device.Config{Backend: device.BackendLibaio}))
	if free >= need {
		return Check{Name: CheckAIOMaxNr, Status: Pass, Detail: detail}
	}
	want := uint64(need + b.Nr)
	fix := int64(1) << bits.Len64(want-1)
	return Check{Name: CheckAIOMaxNr, Status: Fail, Detail: fmt.Sprintf("%s; only %d free, so io_setup would fail with EAGAIN; fix: sysctl -w fs.aio-max-nr=%d",
		detail, free, fix)}
}

// probeLibAIO really creates and destroys a one-event aio context.
func probeLibAIO() error {
	var ctx uintptr
	if _, _, errno := unix.Syscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&ctx)), 0); errno != 0 {
		return fmt.Errorf("io_setup(1): %w", errno)
	}
	if _, _, errno := unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0); errno != 0 {
		return fmt.Errorf("io_destroy: %w", errno)
	}
	return nil
}

// ioUringParams is struct io_uring_params: ten u32 then sq_off and cq_off,
// 120 bytes; the kernel fills everything but entries-related input fields.
type ioUringParams [120]byte

// probeIOUring really sets up a 4-entry ring and closes it.
func probeIOUring() error {
	var p ioUringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return fmt.Errorf("io_uring_setup(4): %w", errno)
	}
	return unix.Close(int(fd))
}

func libaioCheck(probe func() error) Check {
	if err := probe(); err != nil {
		detail := err.Error() + ": the libaio backend cannot run"
		if errors.Is(err, unix.EAGAIN) {
			detail += " (fs.aio-nr has reached fs.aio-max-nr)"
		}
		return Check{Name: CheckLibAIO, Status: Fail, Detail: detail}
	}
	return Check{Name: CheckLibAIO, Status: Pass, Detail: "io_setup and io_destroy work"}
}

// ioUringCheck reads kernel.io_uring_disabled (absent before Linux 6.6,
// which is fine) and then really sets up a ring.
func ioUringCheck(t tree, probe func() error) (Check, bool) {
	const knob = "/proc/sys/kernel/io_uring_disabled"
	setting := "kernel.io_uring_disabled absent (kernel before 6.6)"
	if t.exists(knob) {
		v, err := t.int64(knob)
		if err != nil {
			return Check{Name: CheckIOUring, Status: Fail, Detail: err.Error()}, false
		}
		switch v {
		case 0:
			setting = "kernel.io_uring_disabled = 0"
		case 1:
			setting = "kernel.io_uring_disabled = 1 (root and io_uring_group only)"
		case 2:
			return Check{Name: CheckIOUring, Status: Fail, Detail: "kernel.io_uring_disabled = 2: io_uring is off for everyone; fix: sysctl -w kernel.io_uring_disabled=0"}, false
		default:
			return Check{Name: CheckIOUring, Status: Fail, Detail: fmt.Sprintf("read %s: unknown value %d (want 0, 1 or 2)", t.where(knob), v)}, false
		}
	}
	if err := probe(); err != nil {
		return Check{Name: CheckIOUring, Status: Fail, Detail: setting + "; " + err.Error() + ": the io_uring backend cannot run (fio falls back to libaio)"}, false
	}
	return Check{Name: CheckIOUring, Status: Pass, Detail: setting + "; io_uring_setup works"}, true
}
