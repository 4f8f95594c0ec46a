package device

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// doorbell is an eventfd that the kernel signals as a queue posts
// completions (libaio's IOCB_FLAG_RESFD, io_uring's IORING_REGISTER_EVENTFD),
// so that a reaper with nothing to reap waits in Go's netpoller rather than
// in a blocking syscall.
//
// Why: a goroutine blocked in a syscall keeps its P until the runtime's
// monitor retakes it, which takes up to 10-20 ms when the monitor has
// backed off. Until then the goroutines its completions readied (a
// connection waiting for its read) wait on that P, and when the other Ps
// are busy nobody watches the sockets either. With the server on 2 CPUs,
// one busy with a long ZADD, device GETs waited on those wake-ups, the
// slowest for milliseconds (docs/notes/2026-12-07-comment-figures.md has
// the figures). Parked in the netpoller the reaper holds no P, and its
// wake-up is an ordinary goroutine's.
type doorbell struct {
	fd   int
	file *os.File // the netpoller's handle on fd
	buf  [8]byte  // eventfd's counter, read to reset it
	raw  syscall.RawConn
}

func newDoorbell() (*doorbell, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("device: eventfd for completions: %w", err)
	}
	b := &doorbell{fd: fd, file: os.NewFile(uintptr(fd), "device completions")}
	if b.raw, err = b.file.SyscallConn(); err != nil {
		b.file.Close()
		return nil, fmt.Errorf("device: eventfd for completions: %w", err)
	}
	return b, nil
}

// waitUntil returns once posted reports true, checking it again each time
// the bell rings, and never reads the counter. posted must read the state
// the bell announces (an io_uring CQ's tail) from memory.
//
// Why: wait costs two reads of the eventfd per wake-up (one that finds
// nothing and parks, one that resets the counter), each a syscall, dear on
// a virtual machine: on the virtual test host they were a visible share of
// a one-CPU server's CPU. The counter need not be reset: the
// netpoller watches the eventfd edge-triggered, and the kernel reports
// every signal as a new edge whatever the count (which saturates, it does
// not wrap). A signal is not missed between the check and the wait: the
// netpoller's readiness is cleared before posted is first called, so one
// that comes after it leaves the descriptor ready and the wait returns at
// once. posted is a func(uintptr) bool built once, so that a wait does not
// allocate.
func (b *doorbell) waitUntil(posted func(uintptr) bool) error {
	return b.raw.Read(posted)
}

// wait returns once the counter is non-zero, and resets it. Completions
// posted before wait are not missed: they left the counter non-zero.
func (b *doorbell) wait() error {
	_, err := b.file.Read(b.buf[:])
	return err
}

// ring adds one to the counter, waking the reaper (to see that it must
// stop).
func (b *doorbell) ring() error {
	one := [8]byte{1} // little- or big-endian, the counter only has to be non-zero
	if _, err := unix.Write(b.fd, one[:]); err != nil {
		return fmt.Errorf("device: wake the reaper: %w", err)
	}
	return nil
}

func (b *doorbell) close() error { return b.file.Close() }
