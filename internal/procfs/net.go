// Package procfs reads what Linux's /proc says about processes that a
// run must be sure of: which process owns a listening TCP socket, and
// the tree of processes below one it started (tree.go), so that the
// server behind a launcher is found and a whole tree is stopped. Every
// function takes the /proc to read as a Root, which tests point at
// fixture trees.
package procfs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Root is where /proc is mounted: "/proc" but in tests.
type Root string

// Listen is one LISTEN socket of /proc/net/tcp or /proc/net/tcp6.
type Listen struct {
	IP    net.IP
	Port  int
	Inode uint64
}

func (e Listen) String() string { return net.JoinHostPort(e.IP.String(), strconv.Itoa(e.Port)) }

// tcpListen is the st column's value for a listening socket.
const tcpListen = "0A"

// ParseNetTCP returns the LISTEN sockets of a /proc/net/tcp or tcp6
// file: after a header line, one socket a line, column 2 the local address
// as hex IP:PORT (the IP as the kernel's in-memory 32-bit words, printed in
// this host's byte order; the port big-endian), column 4 the state, column
// 10 the inode. A malformed line is an error naming it.
func ParseNetTCP(data []byte) ([]Listen, error) {
	var out []Listen
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || line == 1 && f[0] == "sl" {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("line %d: %d columns, want at least 10", line, len(f))
		}
		if f[3] != tcpListen {
			continue
		}
		ip, port, err := parseHexAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: local address %q: %w", line, f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: inode %q is not a number", line, f[9])
		}
		out = append(out, Listen{IP: ip, Port: port, Inode: inode})
	}
	return out, sc.Err()
}

// parseHexAddr decodes "0100007F:18EB" (IPv4) or 32 hex digits and a port
// (IPv6): each 32-bit word of the address is printed as a number of this
// host's byte order, so it is stored back with binary.NativeEndian.
func parseHexAddr(s string) (net.IP, int, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok || (len(h) != 8 && len(h) != 32) || len(p) != 4 {
		return nil, 0, fmt.Errorf("want 8 or 32 hex digits, a colon and 4 hex digits")
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, 0, fmt.Errorf("address: %w", err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("port: %w", err)
	}
	return ip, int(port), nil
}

// Matches reports whether a LISTEN entry accepts connections to addr:
// the same port, and the same IP or a wildcard one (0.0.0.0 for IPv4, ::
// for both).
func (e Listen) Matches(addr *net.TCPAddr) bool {
	if e.Port != addr.Port {
		return false
	}
	if e.IP.Equal(addr.IP) {
		return true
	}
	if e.IP.Equal(net.IPv6unspecified) {
		return true
	}
	return e.IP.Equal(net.IPv4zero) && addr.IP.To4() != nil
}

// SocketInodes returns the inodes of the sockets among /proc/<pid>/fd.
func (p Root) SocketInodes(pid int) (map[uint64]bool, error) {
	dir := filepath.Join(string(p), strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("procfs: open files of pid %d: %w", pid, err)
	}
	out := map[uint64]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if n, ok := ParseSocketLink(link); ok {
			out[n] = true
		}
	}
	return out, nil
}

// ParseSocketLink reads "socket:[12345]", the target of a socket's fd link.
func ParseSocketLink(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(s, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}

// Listening returns the LISTEN entries for addr in the network namespace
// of pid (/proc/<pid>/net/tcp and tcp6; "self" for this process's).
func (p Root) Listening(pid string, addr *net.TCPAddr) ([]Listen, error) {
	var out []Listen
	var errs []error
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join(string(p), pid, "net", name)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6 on this host
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("procfs: %w", err))
			continue
		}
		entries, err := ParseNetTCP(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("procfs: %s: %w", path, err))
			continue
		}
		for _, e := range entries {
			if e.Matches(addr) {
				out = append(out, e)
			}
		}
	}
	return out, errors.Join(errs...)
}

// SocketOwner finds the process holding socket inode among /proc/*/fd;
// 0 when no process this one may look into holds it.
func (p Root) SocketOwner(inode uint64) int {
	for _, pid := range p.pids() {
		if inodes, err := p.SocketInodes(pid); err == nil && inodes[inode] {
			return pid
		}
	}
	return 0
}

// pids lists the processes of /proc.
func (p Root) pids() []int {
	entries, _ := os.ReadDir(string(p))
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Command returns /proc/<pid>/comm, or "" when it cannot be read.
func (p Root) Command(pid int) string {
	b, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Describe names a pid and its command for a sentence.
func (p Root) Describe(pid int) string {
	if c := p.Command(pid); c != "" {
		return fmt.Sprintf("pid %d (%s)", pid, c)
	}
	return fmt.Sprintf("pid %d", pid)
}
