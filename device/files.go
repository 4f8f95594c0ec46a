package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// segmentFiles is the table of segment file descriptors of a file backend.
// Lookups are a lock-free load of a copy-on-write slice (-1 = not open), so
// the submit path takes no lock once a segment is open.
type segmentFiles struct {
	dir string
	mu  sync.Mutex // serialises opening and closing
	fds atomic.Pointer[[]int32]
}

func newSegmentFiles(dir string) *segmentFiles {
	f := &segmentFiles{dir: dir}
	empty := []int32{}
	f.fds.Store(&empty)
	return f
}

// fd returns the descriptor of segment n. A missing file is created when
// create is set (a write); for a read it is ErrPastEnd: nothing was ever
// written there.
func (f *segmentFiles) fd(n uint64, create bool) (int32, error) {
	if fds := *f.fds.Load(); n < uint64(len(fds)) && fds[n] >= 0 {
		return fds[n], nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fds := *f.fds.Load()
	if n < uint64(len(fds)) && fds[n] >= 0 {
		return fds[n], nil
	}
	path := segmentPath(f.dir, n)
	flags := unix.O_RDWR | unix.O_DIRECT | unix.O_CLOEXEC
	if create {
		flags |= unix.O_CREAT
	}
	fd, err := unix.Open(path, flags, 0o644)
	if err != nil {
		if !create && errors.Is(err, unix.ENOENT) {
			return -1, fmt.Errorf("%w: segment file %s does not exist", ErrPastEnd, path)
		}
		return -1, fmt.Errorf("device: open %s with O_DIRECT: %w", path, err)
	}
	grown := make([]int32, max(uint64(len(fds)), n+1))
	for i := range grown {
		grown[i] = -1
	}
	copy(grown, fds)
	grown[n] = int32(fd)
	f.fds.Store(&grown)
	return int32(fd), nil
}

// mkdirAll creates dir and its parents; its error names dir once (the
// *fs.PathError of os.MkdirAll names it again, or the parent that could
// not be made, which it keeps).
func mkdirAll(dir string) error {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && filepath.Clean(pe.Path) == filepath.Clean(dir) {
		err = pe.Err
	}
	return fmt.Errorf("device: create directory %s: %w", dir, err)
}

// openExisting opens the segment files already in dir, so that a device
// reopened on a prepared file set finds them.
func (f *segmentFiles) openExisting() error {
	if err := mkdirAll(f.dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return fmt.Errorf("device: list %s: %w", f.dir, err)
	}
	for _, e := range entries {
		n, ok := segmentNumber(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		if _, err := f.fd(n, false); err != nil {
			f.closeAll()
			return err
		}
	}
	return nil
}

// segmentNumber parses a file name of the form segment.<N>, N canonical
// decimal (no sign, no leading zeros) below maxSegmentFiles.
func segmentNumber(name string) (uint64, bool) {
	digits, ok := strings.CutPrefix(name, "segment.")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != digits || n >= maxSegmentFiles {
		return 0, false
	}
	return n, true
}

// closeAll closes every open segment file.
func (f *segmentFiles) closeAll() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var first error
	for _, fd := range *f.fds.Load() {
		if fd >= 0 {
			if err := unix.Close(int(fd)); err != nil && first == nil {
				first = fmt.Errorf("device: close segment file: %w", err)
			}
		}
	}
	empty := []int32{}
	f.fds.Store(&empty)
	return first
}
