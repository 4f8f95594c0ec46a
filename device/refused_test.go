package device

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestSetupErrorClassifies checks which setup errnos read as "not available
// here" (ErrKernelRefused, a reason to skip or fall back) and which stay
// plain errors.
func TestSetupErrorClassifies(t *testing.T) {
	uring := []unix.Errno{unix.ENOSYS, unix.EPERM}
	cases := []struct {
		name        string
		e           unix.Errno
		unavailable []unix.Errno
		refused     bool
	}{
		{"uring ENOSYS", unix.ENOSYS, uring, true},
		{"uring EPERM", unix.EPERM, uring, true},
		{"uring EINVAL", unix.EINVAL, uring, false},
		{"uring ENOMEM", unix.ENOMEM, uring, false},
		{"uring EFAULT", unix.EFAULT, uring, false},
		{"uring EAGAIN", unix.EAGAIN, uring, false},
		{"uring EACCES", unix.EACCES, uring, false},
		{"aio ENOSYS", unix.ENOSYS, aioUnavailable, true},
		{"aio EPERM", unix.EPERM, aioUnavailable, true},
		{"aio EAGAIN", unix.EAGAIN, aioUnavailable, true},
		{"aio EINVAL", unix.EINVAL, aioUnavailable, false},
		{"aio EFAULT", unix.EFAULT, aioUnavailable, false},
	}
	for _, c := range cases {
		err := setupError("setup(1)", c.e, c.unavailable...)
		if got := errors.Is(err, ErrKernelRefused); got != c.refused {
			t.Errorf("%s: %v is ErrKernelRefused: got %v, want %v", c.name, err, got, c.refused)
		}
		if !errors.Is(err, c.e) || !strings.Contains(err.Error(), "setup(1)") || strings.Count(err.Error(), "device:") != 1 {
			t.Errorf("%s: %q: want the errno wrapped, the call named and one \"device:\"", c.name, err)
		}
	}
}

// TestSetupEINVALSurfaces makes the real kernel answer EINVAL to each file
// backend's setup syscall (a flag io_uring_setup does not know; a context id
// io_setup wants zeroed): Open must fail with that EINVAL as a plain error,
// not as ErrKernelRefused, which the tests would take for "not available
// here" and skip.
func TestSetupEINVALSurfaces(t *testing.T) {
	cases := []struct {
		backend string
		inject  func() (undo func())
		call    string
	}{
		{BackendUring, func() func() {
			uringSetupExtraFlags = 1 << 31
			return func() { uringSetupExtraFlags = 0 }
		}, "io_uring_setup("},
		{BackendLibaio, func() func() {
			aioSetupContextID = 1
			return func() { aioSetupContextID = 0 }
		}, "io_setup("},
	}
	for _, c := range cases {
		t.Run(c.backend, func(t *testing.T) {
			cfg := Config{Backend: c.backend, SegmentBytes: 1 << 20, ThrottleLimit: 64, IOContexts: 1, OnComplete: func(uint64, int, error) {}}
			cfg.Dir = testenv.MustDiskDir(t)
			openTest(t, cfg) // skips only if the kernel refuses the backend outright
			undo := c.inject()
			d, err := Open(cfg)
			undo()
			if err == nil {
				d.Close()
				t.Fatalf("Open with a bad %s: got a device, want EINVAL", c.call)
			}
			if errors.Is(err, ErrKernelRefused) || !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), c.call) {
				t.Errorf("got %v (ErrKernelRefused %v), want a plain EINVAL naming %s", err, errors.Is(err, ErrKernelRefused), c.call)
			}
		})
	}
}
