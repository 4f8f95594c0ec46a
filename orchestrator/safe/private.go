package safe

import (
	"errors"
	"fmt"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Every directory a run reads or writes (--data, the state dir, --out) is
// checked before its first use the way ssh's StrictModes checks ~/.ssh:
// the directory and each directory above it belong to this user or to
// root, and none may be written by group or others unless it is sticky
// (as /tmp is) — and a sticky one the run writes in directly holds only
// this user's or root's entries. Otherwise another user of the host could
// plant a link or a file where the run writes or reads, and the run is
// refused with the reason and the command that fixes it.

// privateOwner reports whether uid may own a directory the run uses:
// this user or root.
func privateOwner(uid uint32) bool {
	return uid == 0 || int(uid) == os.Geteuid()
}

// CheckPrivateDir checks dir, which the flag named what gives, and every
// directory above it, as the path is written and with its links
// resolved. A part that does not exist yet is not checked: the run makes
// it itself (makePrivateDir). A link on the way is accepted only when
// this user or root owns it.
func CheckPrivateDir(what, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("orchestrator: %s %s: %w", what, dir, err)
	}
	if err := checkPrivateChain(what, abs); err != nil {
		return err
	}
	if real := realPath(abs); real != abs {
		return checkPrivateChain(what, real)
	}
	return nil
}

// checkPrivateChain checks path and its parents, from the root down.
func checkPrivateChain(what, path string) error {
	var chain []string
	for p := path; ; p = filepath.Dir(p) {
		chain = append(chain, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if err := checkPrivateEntry(what, chain[i], i == 0); err != nil {
			return err
		}
	}
	return nil
}

// checkPrivateEntry checks one directory (or link) of a chain; last says
// it is the one the run writes in.
func checkPrivateEntry(what, p string, last bool) error {
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("orchestrator: %s: %w", what, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := strconv.Itoa(os.Geteuid())
	if !privateOwner(sys.Uid) {
		return fmt.Errorf("%w: %s: %s belongs to uid %d, not to you (uid %s) or root: whoever owns it can put a link there and make the run write or kill through it; give a directory of your own (or, as root, chown %s %s)",
			fault.ErrConfig, what, p, sys.Uid, me, me, p)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return nil // its target is checked with the links resolved
	case !st.IsDir():
		return fmt.Errorf("%w: %s: %s is not a directory", fault.ErrConfig, what, p)
	case st.Mode().Perm()&0o022 == 0:
		return nil
	case st.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("%w: %s: %s may be written by group or others (mode %04o): another user could put a link there and make the run write or kill through it; chmod go-w %s, or give a directory of your own",
			fault.ErrConfig, what, p, st.Mode().Perm(), p)
	case !last:
		return nil // sticky, as /tmp: others cannot replace what is ours
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return fmt.Errorf("orchestrator: %s: %w", what, err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // gone since
		}
		if s, ok := info.Sys().(*syscall.Stat_t); ok && !privateOwner(s.Uid) {
			return fmt.Errorf("%w: %s: %s may be written by others (mode %04o, sticky) and holds %s of uid %d: give a directory only you may write (chmod go-w %s, or a new one)",
				fault.ErrConfig, what, p, st.Mode().Perm()|fs.ModeSticky, e.Name(), s.Uid, p)
		}
	}
	return nil
}

// MakePrivateDir checks dir (checkPrivateDir), creates what is missing
// of it with perm, and checks it again, so that a directory another user
// made first in between is refused; it reports whether it created dir
// itself.
func MakePrivateDir(what, dir string, perm os.FileMode) (created bool, err error) {
	if err := CheckPrivateDir(what, dir); err != nil {
		return false, err
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return false, fmt.Errorf("orchestrator: %s %s: %w", what, dir, err)
	}
	return created, CheckPrivateDir(what, dir)
}

// createNew creates path for writing, refusing a link or a file already
// there (O_EXCL, O_NOFOLLOW): the run's new files are its own.
func createNew(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
}

// CreateOrTruncate opens path for writing, created or emptied, refusing
// a link: a log a resumed run writes again.
func CreateOrTruncate(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
}

// WriteNewFile replaces path with a new file holding data: what was there
// (a file of an earlier run, a link) is removed, not written through.
func WriteNewFile(path string, data []byte, perm os.FileMode) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := createNew(path, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// OpenRegular opens a state file for reading: never a link (O_NOFOLLOW),
// never blocking on a FIFO (O_NONBLOCK), and only a regular file, checked
// on the open descriptor.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return f, nil
}

// WriteFileNoFollow is os.WriteFile refusing a link at path.
func WriteFileNoFollow(path string, data []byte, perm os.FileMode) error {
	f, err := CreateOrTruncate(path, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
