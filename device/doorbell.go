package device

import (
	"fmt"
	"os"

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
// are busy nobody watches the sockets either. Measured with the server on
// 2 CPUs, one busy with a 500 k-member ZADD: a device GET waited 0.7 ms at
// the median and 13 ms at p99 for those wake-ups. Parked in the netpoller
// the reaper holds no P, and its wake-up is an ordinary goroutine's.
type doorbell struct {
	fd   int
	file *os.File // the netpoller's handle on fd
	buf  [8]byte  // eventfd's counter, read to reset it
}

func newDoorbell() (*doorbell, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("device: eventfd for completions: %w", err)
	}
	return &doorbell{fd: fd, file: os.NewFile(uintptr(fd), "device completions")}, nil
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
