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
	flags := unix.O_RDWR | unix.O_DIRECT
	if create {
		flags |= unix.O_CREAT
	}
	fd, err := openSegment(path, flags)
	if err != nil {
		if !create && errors.Is(err, unix.ENOENT) {
			return -1, fmt.Errorf("%w: segment file %s does not exist", ErrPastEnd, path)
		}
		return -1, err
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

// openSegment opens the segment file at path with flags, never through a
// link: a symbolic link (O_NOFOLLOW), a hard link to a file elsewhere, or
// anything but a regular file is refused, since whoever could plant one in
// the data directory would have the device write its log into the file
// the link names. A file it creates is the user's alone (0600).
func openSegment(path string, flags int) (int, error) {
	fd, err := unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("device: segment file %s is a symbolic link: the device never writes through a link; remove it (and check who made it)", path)
	}
	if err != nil {
		// O_DIRECT refuses a FIFO or a device node with EINVAL: say what
		// the path is rather than that.
		if info, lerr := os.Lstat(path); lerr == nil && !info.Mode().IsRegular() {
			return -1, fmt.Errorf("device: segment file %s is not a regular file (%v): remove it", path, info.Mode())
		}
		return -1, fmt.Errorf("device: open %s with O_DIRECT: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("device: stat %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("device: segment file %s is not a regular file (mode %#o): remove it", path, st.Mode)
	case st.Nlink > 1:
		err = fmt.Errorf("device: segment file %s has %d hard links: the device never writes through a link; remove it (and check who made it)", path, st.Nlink)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// truncateSegment empties the segment file at path, if there is one,
// without following a link (os.Truncate would truncate what it names).
func truncateSegment(path string) error {
	fd, err := openSegment(path, unix.O_WRONLY)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, 0); err != nil {
		return fmt.Errorf("device: truncate %s: %w", path, err)
	}
	return nil
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
