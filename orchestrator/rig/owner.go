package rig

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

// ErrWrongProcess is wrapped when --server-pid is not the process that
// listens on --server-addr: its /proc/<pid>/io would count another
// process's device reads.
var ErrWrongProcess = fmt.Errorf("%w: the pid is not the server's", fault.ErrRefused)

// namespacePIDs returns the NSpid line of /proc/<pid>/status: the pid in
// each pid namespace from this one inwards (a container's server reports
// the innermost one as its process_id).
func (p ProcRoot) namespacePIDs(pid int) []int64 {
	data, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "status"))
	if err != nil {
		return nil
	}
	return ParseNSpid(data)
}

func ParseNSpid(status []byte) []int64 {
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

// proveOwner proves that pid owns the socket listening on addr: the
// LISTEN entry for addr in pid's network namespace has an inode that is
// among pid's open files. pid 0 means "find the owner". It refuses, with
// a sentence naming both pids, when another process owns the socket.
func (p ProcRoot) proveOwner(addr string, pid int) (results.OwnerProof, error) {
	proof := results.OwnerProof{Addr: addr, PID: pid}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return proof, fmt.Errorf("%w: --server-addr %s: %w", fault.ErrRefused, addr, err)
	}
	if pid == 0 {
		return p.findOwner(tcp, proof)
	}
	if _, err := os.Stat(filepath.Join(string(p), strconv.Itoa(pid))); err != nil {
		return proof, fmt.Errorf("%w: --server-pid %d: no such process on this host (for a container give its host pid, docker inspect -f '{{.State.Pid}}')", ErrWrongProcess, pid)
	}
	proof.Command = procfs.Root(p).Command(pid)
	entries, err := procfs.Root(p).Listening(strconv.Itoa(pid), tcp)
	if len(entries) == 0 {
		owner := p.ownerInOurNamespace(tcp)
		who := "no process this run may look into"
		if owner > 0 {
			who = procfs.Root(p).Describe(owner)
		}
		return proof, fmt.Errorf("%w: %s does not own the socket listening on %s: %s does%s", ErrWrongProcess,
			procfs.Root(p).Describe(pid), addr, who, errSuffix(err))
	}
	inodes, ierr := procfs.Root(p).SocketInodes(pid)
	if ierr != nil {
		return proof, fmt.Errorf("%w: cannot prove %s owns the socket listening on %s: %w", ErrWrongProcess, procfs.Root(p).Describe(pid), addr, ierr)
	}
	for _, e := range entries {
		if inodes[e.Inode] {
			proof.Listen, proof.Inode = e.String(), e.Inode
			return proof, nil
		}
	}
	owner := procfs.Root(p).SocketOwner(entries[0].Inode)
	who := "no process this run may look into"
	if owner > 0 {
		who = procfs.Root(p).Describe(owner)
	}
	return proof, fmt.Errorf("%w: %s does not own the socket listening on %s (inode %d): %s does", ErrWrongProcess,
		procfs.Root(p).Describe(pid), addr, entries[0].Inode, who)
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// ownerInOurNamespace is the pid owning the LISTEN socket for addr in
// this process's network namespace; 0 when none is found.
func (p ProcRoot) ownerInOurNamespace(addr *net.TCPAddr) int {
	entries, _ := procfs.Root(p).Listening("self", addr)
	for _, e := range entries {
		if pid := procfs.Root(p).SocketOwner(e.Inode); pid > 0 {
			return pid
		}
	}
	return 0
}

// findOwner is proveOwner for a pid not given: the owner of the socket.
func (p ProcRoot) findOwner(addr *net.TCPAddr, proof results.OwnerProof) (results.OwnerProof, error) {
	entries, err := procfs.Root(p).Listening("self", addr)
	for _, e := range entries {
		if pid := procfs.Root(p).SocketOwner(e.Inode); pid > 0 {
			proof.PID, proof.Command, proof.Listen, proof.Inode, proof.Found = pid, procfs.Root(p).Command(pid), e.String(), e.Inode, true
			return proof, nil
		}
	}
	return proof, fmt.Errorf("%w: no process on this host is seen listening on %s%s: give --server-pid (for a container, its host pid); a server on another machine, such as a managed service, cannot have its device reads counted here: measure it with tierbench bench --uri",
		ErrWrongProcess, proof.Addr, errSuffix(err))
}

// checkInfoPID compares the pid the server reports in INFO server with
// the proven one (or its pid in an inner namespace, for a container).
func (p ProcRoot) checkInfoPID(proof *results.OwnerProof, info map[string]string) error {
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
		ErrWrongProcess, proof.Addr, reported, procfs.Root(p).Describe(proof.PID))
}

// ProveServer is the whole check of a server before it is measured:
// something answers at addr (a refused connection is refused at once),
// pid owns its listening socket, and INFO server's process_id agrees.
func (p ProcRoot) ProveServer(ctx context.Context, acc Access, addr string, pid int) (results.OwnerProof, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := acc.dial(dctx, addr)
	if err != nil {
		return results.OwnerProof{Addr: addr, PID: pid}, fmt.Errorf("%w: nothing answers at --server-addr %s: %w", fault.ErrRefused, addr, err)
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
		return proof, fmt.Errorf("%w: INFO server on %s: %w", fault.ErrRefused, addr, err)
	}
	return proof, p.checkInfoPID(&proof, info)
}
