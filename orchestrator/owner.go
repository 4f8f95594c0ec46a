package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/results"
)

// ErrWrongProcess is wrapped when --server-pid is not the process that
// listens on --server-addr: its /proc/<pid>/io would count another
// process's device reads.
var ErrWrongProcess = fmt.Errorf("%w: the pid is not the server's", ErrRefused)

// listenEntry is one LISTEN socket of /proc/net/tcp or /proc/net/tcp6.
type listenEntry struct {
	IP    net.IP
	Port  int
	Inode uint64
}

func (e listenEntry) String() string { return net.JoinHostPort(e.IP.String(), strconv.Itoa(e.Port)) }

// tcpListen is the st column's value for a listening socket.
const tcpListen = "0A"

// parseProcNetTCP returns the LISTEN sockets of a /proc/net/tcp or tcp6
// file: after a header line, one socket a line, column 2 the local address
// as hex IP:PORT (the IP as the kernel's in-memory 32-bit words, printed in
// this host's byte order; the port big-endian), column 4 the state, column
// 10 the inode. A malformed line is an error naming it.
func parseProcNetTCP(data []byte) ([]listenEntry, error) {
	var out []listenEntry
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
		out = append(out, listenEntry{IP: ip, Port: port, Inode: inode})
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

// matches reports whether a LISTEN entry accepts connections to addr:
// the same port, and the same IP or a wildcard one (0.0.0.0 for IPv4, ::
// for both).
func (e listenEntry) matches(addr *net.TCPAddr) bool {
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

// socketInodes returns the inodes of the sockets among /proc/<pid>/fd.
func (p procRoot) socketInodes(pid int) (map[uint64]bool, error) {
	dir := filepath.Join(string(p), strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: open files of pid %d: %w", pid, err)
	}
	out := map[uint64]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if n, ok := parseSocketLink(link); ok {
			out[n] = true
		}
	}
	return out, nil
}

// parseSocketLink reads "socket:[12345]", the target of a socket's fd link.
func parseSocketLink(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(s, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}

// listening returns the LISTEN entries for addr in the network namespace
// of pid (/proc/<pid>/net/tcp and tcp6; "self" for this process's).
func (p procRoot) listening(pid string, addr *net.TCPAddr) ([]listenEntry, error) {
	var out []listenEntry
	var errs []error
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join(string(p), pid, "net", name)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6 on this host
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("orchestrator: %w", err))
			continue
		}
		entries, err := parseProcNetTCP(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("orchestrator: %s: %w", path, err))
			continue
		}
		for _, e := range entries {
			if e.matches(addr) {
				out = append(out, e)
			}
		}
	}
	return out, errors.Join(errs...)
}

// socketOwner finds the process holding socket inode among /proc/*/fd;
// 0 when no process this one may look into holds it.
func (p procRoot) socketOwner(inode uint64) int {
	entries, _ := os.ReadDir(string(p))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if inodes, err := p.socketInodes(pid); err == nil && inodes[inode] {
			return pid
		}
	}
	return 0
}

// command returns /proc/<pid>/comm, or "" when it cannot be read.
func (p procRoot) command(pid int) string {
	b, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// namespacePIDs returns the NSpid line of /proc/<pid>/status: the pid in
// each pid namespace from this one inwards (a container's server reports
// the innermost one as its process_id).
func (p procRoot) namespacePIDs(pid int) []int64 {
	data, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "status"))
	if err != nil {
		return nil
	}
	return parseNSpid(data)
}

func parseNSpid(status []byte) []int64 {
	for line := range strings.SplitSeq(string(status), "\n") {
		v, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		var out []int64
		for _, f := range strings.Fields(v) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil || n < 1 {
				return nil
			}
			out = append(out, n)
		}
		return out
	}
	return nil
}

// describe names a pid and its command for a refusal sentence.
func (p procRoot) describe(pid int) string {
	if c := p.command(pid); c != "" {
		return fmt.Sprintf("pid %d (%s)", pid, c)
	}
	return fmt.Sprintf("pid %d", pid)
}

// proveOwner proves that pid owns the socket listening on addr: the
// LISTEN entry for addr in pid's network namespace has an inode that is
// among pid's open files. pid 0 means "find the owner". It refuses, with
// a sentence naming both pids, when another process owns the socket.
func (p procRoot) proveOwner(addr string, pid int) (results.OwnerProof, error) {
	proof := results.OwnerProof{Addr: addr, PID: pid}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return proof, fmt.Errorf("%w: --server-addr %s: %w", ErrRefused, addr, err)
	}
	if pid == 0 {
		return p.findOwner(tcp, proof)
	}
	if _, err := os.Stat(filepath.Join(string(p), strconv.Itoa(pid))); err != nil {
		return proof, fmt.Errorf("%w: --server-pid %d: no such process on this host (for a container give its host pid, docker inspect -f '{{.State.Pid}}')", ErrWrongProcess, pid)
	}
	proof.Command = p.command(pid)
	entries, err := p.listening(strconv.Itoa(pid), tcp)
	if len(entries) == 0 {
		owner := p.ownerInOurNamespace(tcp)
		who := "no process this run may look into"
		if owner > 0 {
			who = p.describe(owner)
		}
		return proof, fmt.Errorf("%w: %s does not own the socket listening on %s: %s does%s", ErrWrongProcess,
			p.describe(pid), addr, who, errSuffix(err))
	}
	inodes, ierr := p.socketInodes(pid)
	if ierr != nil {
		return proof, fmt.Errorf("%w: cannot prove %s owns the socket listening on %s: %w", ErrWrongProcess, p.describe(pid), addr, ierr)
	}
	for _, e := range entries {
		if inodes[e.Inode] {
			proof.Listen, proof.Inode = e.String(), e.Inode
			return proof, nil
		}
	}
	owner := p.socketOwner(entries[0].Inode)
	who := "no process this run may look into"
	if owner > 0 {
		who = p.describe(owner)
	}
	return proof, fmt.Errorf("%w: %s does not own the socket listening on %s (inode %d): %s does", ErrWrongProcess,
		p.describe(pid), addr, entries[0].Inode, who)
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// ownerInOurNamespace is the pid owning the LISTEN socket for addr in
// this process's network namespace; 0 when none is found.
func (p procRoot) ownerInOurNamespace(addr *net.TCPAddr) int {
	entries, _ := p.listening("self", addr)
	for _, e := range entries {
		if pid := p.socketOwner(e.Inode); pid > 0 {
			return pid
		}
	}
	return 0
}

// findOwner is proveOwner for a pid not given: the owner of the socket.
func (p procRoot) findOwner(addr *net.TCPAddr, proof results.OwnerProof) (results.OwnerProof, error) {
	entries, err := p.listening("self", addr)
	for _, e := range entries {
		if pid := p.socketOwner(e.Inode); pid > 0 {
			proof.PID, proof.Command, proof.Listen, proof.Inode, proof.Found = pid, p.command(pid), e.String(), e.Inode, true
			return proof, nil
		}
	}
	return proof, fmt.Errorf("%w: no process on this host is seen listening on %s%s: give --server-pid (for a container, its host pid)",
		ErrWrongProcess, proof.Addr, errSuffix(err))
}

// checkInfoPID compares the pid the server reports in INFO server with
// the proven one (or its pid in an inner namespace, for a container).
func (p procRoot) checkInfoPID(proof *results.OwnerProof, info map[string]string) error {
	v, ok := info["process_id"]
	if !ok {
		return nil
	}
	reported, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: INFO server process_id %q is not a pid", ErrWrongProcess, v)
	}
	proof.InfoPID = reported
	ns := p.namespacePIDs(proof.PID)
	if len(ns) > 1 {
		parts := make([]string, len(ns))
		for i, n := range ns {
			parts[i] = strconv.FormatInt(n, 10)
		}
		proof.Namespace = strings.Join(parts, " ")
	}
	if reported == int64(proof.PID) || slices.Contains(ns, reported) {
		return nil
	}
	return fmt.Errorf("%w: the server at %s says its process_id is %d (INFO server), but %s owns its listening socket",
		ErrWrongProcess, proof.Addr, reported, p.describe(proof.PID))
}

// proveServer is the whole check of a server before it is measured:
// something answers at addr (a refused connection is refused at once),
// pid owns its listening socket, and INFO server's process_id agrees.
func (p procRoot) proveServer(ctx context.Context, addr string, pid int) (results.OwnerProof, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := dialRESP(dctx, addr)
	if err != nil {
		return results.OwnerProof{Addr: addr, PID: pid}, fmt.Errorf("%w: nothing answers at --server-addr %s: %w", ErrRefused, addr, err)
	}
	defer c.Close()
	proof, err := p.proveOwner(addr, pid)
	if err != nil {
		return proof, err
	}
	info, err := c.info("server")
	if err != nil {
		if isRESPError(err) {
			return proof, nil // a server without INFO: the socket proof stands alone
		}
		return proof, fmt.Errorf("%w: INFO server on %s: %w", ErrRefused, addr, err)
	}
	return proof, p.checkInfoPID(&proof, info)
}
