package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// maxSecretFileBytes bounds what ReadPrivateFile reads: a password or an
// ACL file of many users is far smaller, and a file that is not one must
// not make the server read without bound.
const maxSecretFileBytes = 1 << 20

// ReadPrivateFile reads a file that holds secrets (a password, an ACL
// file). It refuses, with the reason and the command that fixes it, a path
// that is a symbolic link (whoever may replace the link chooses what is
// read), anything but a regular file (a FIFO would block the reader), and a
// file that group or others may read or write (the secret is no longer
// the owner's alone). The file is opened O_NONBLOCK so that a FIFO is
// refused by the check rather than hanging the open.
func ReadPrivateFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: give the file itself, not a link to it", path)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (mode %v): give a regular file", path, info.Mode())
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read or written by group or others (mode %04o): run chmod go-rwx %s", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSecretFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a password or ACL file", path, maxSecretFileBytes)
	}
	return data, nil
}

// ReadPasswordFile reads a password from the first line of a private file
// (see ReadPrivateFile), without its line ending.
func ReadPasswordFile(path string) (string, error) {
	data, err := ReadPrivateFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return "", fmt.Errorf("%s: the first line is empty, want the password", path)
	}
	return string(line), nil
}

// LoadACLFile reads the users of an ACL file in Redis's aclfile format
// (see ParseACLFile) from a private file (see ReadPrivateFile). Its errors
// name the file and the line.
func LoadACLFile(path string) ([]string, error) {
	data, err := ReadPrivateFile(path)
	if err != nil {
		return nil, err
	}
	users, err := ParseACLFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return users, nil
}

// ParseACLFile reads Redis's ACL file format: one user a line, "user NAME
// RULE...", with the rules Config.Users takes (acl.go); blank lines are
// skipped, and, as in Redis, there are no comments. Words are separated by
// spaces and tabs; quotes are not taken, so a password holds no space. It
// returns the users as Config.Users takes them, "NAME RULE...". An error
// begins with the line number.
func ParseACLFile(data []byte) ([]string, error) {
	var users []string
	lineOf := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if words[0] != "user" || len(words) < 2 {
			return nil, fmt.Errorf("%d: want \"user NAME RULE...\", like \"user alice on >secret ~* &* +@all\" (an ACL file has no comments)", n)
		}
		spec := strings.Join(words[1:], " ")
		u, err := parseUser(spec)
		if err != nil {
			return nil, fmt.Errorf("%d: %s", n, strings.TrimPrefix(err.Error(), "server: "))
		}
		if first, ok := lineOf[u.name]; ok {
			return nil, fmt.Errorf("%d: user %s is given on line %d too: give each user once, with all its rules", n, u.name, first)
		}
		lineOf[u.name] = n
		users = append(users, spec)
	}
	return users, nil
}
