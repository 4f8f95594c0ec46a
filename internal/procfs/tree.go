package procfs

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stat is what a run needs of /proc/<pid>/stat.
type Stat struct {
	State     byte   // R, S, D, Z, …
	PPID      int    // the parent
	PGRP      int    // the process group
	StartTime uint64 // clock ticks after boot: with the pid, names one process
}

// ReadStat reads /proc/<pid>/stat.
func (p Root) ReadStat(pid int) (Stat, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, fmt.Errorf("procfs: %w", err)
	}
	st, err := ParseStat(data)
	if err != nil {
		return Stat{}, fmt.Errorf("procfs: %s: %w", path, err)
	}
	return st, nil
}

// ParseStat parses a /proc/<pid>/stat line. The command name (field 2)
// may hold blanks and parentheses: the fields after it start after the
// last ')'.
func ParseStat(data []byte) (Stat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("no ')' closing the command name")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("%d fields after the command name, want at least 20", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ppid < 0 || pgrp < 0 {
		return Stat{}, fmt.Errorf("ppid %q, pgrp %q, starttime %q: want numbers", f[1], f[2], f[19])
	}
	return Stat{State: f[0][0], PPID: ppid, PGRP: pgrp, StartTime: start}, nil
}

// Proc names one process: its pid and its start time, so a recycled pid
// is never taken for it.
type Proc struct {
	PID       int
	StartTime uint64
}

// alive reports whether the process is still there and not a zombie.
func (p Root) alive(pr Proc) bool {
	st, err := p.ReadStat(pr.PID)
	return err == nil && st.StartTime == pr.StartTime && st.State != 'Z' && st.State != 'X'
}

// Tree returns pid and every process below it, parents before their
// children, as /proc shows them now; empty when pid is gone.
func (p Root) Tree(pid int) []Proc {
	children := map[int][]Proc{}
	var self *Proc
	for _, q := range p.pids() {
		st, err := p.ReadStat(q)
		if err != nil {
			continue // gone meanwhile
		}
		if q == pid {
			self = &Proc{q, st.StartTime}
		}
		children[st.PPID] = append(children[st.PPID], Proc{q, st.StartTime})
	}
	if self == nil {
		return nil
	}
	out := []Proc{*self}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].PID]...)
	}
	return out
}

// ListenerInTree returns the process of pid's tree that owns the socket
// listening on addr: the real server behind a launcher (dotnet running
// GarnetServer.dll, a script that forks the server). When several hold
// it (a socket handed down), the deepest is the server. Its error names
// who owns the socket when no process of the tree does.
func (p Root) ListenerInTree(pid int, addr string) (int, error) {
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("procfs: %s: %w", addr, err)
	}
	tree := p.Tree(pid)
	if len(tree) == 0 {
		return 0, fmt.Errorf("procfs: pid %d is gone: nothing of its tree listens on %s", pid, addr)
	}
	entries, err := p.Listening(strconv.Itoa(pid), tcp)
	if len(entries) == 0 {
		return 0, fmt.Errorf("procfs: nothing listens on %s in the network namespace of %s%s", addr, p.Describe(pid), errSuffix(err))
	}
	for i := len(tree) - 1; i >= 0; i-- {
		inodes, err := p.SocketInodes(tree[i].PID)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if inodes[e.Inode] {
				return tree[i].PID, nil
			}
		}
	}
	who := "no process this one may look into"
	if owner := p.SocketOwner(entries[0].Inode); owner > 0 {
		who = p.Describe(owner)
	}
	return 0, fmt.Errorf("procfs: no process of %s's tree (%d processes) owns the socket listening on %s: %s does", p.Describe(pid), len(tree), addr, who)
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// StopTree stops pid and every process below it: SIGTERM to pid's
// process group and to each process of the tree (those that left the
// group with setsid too), up to grace for them to go, then SIGKILL to
// whatever is left and to anything the tree forked meanwhile. A process
// is signalled only while it is the one seen in the tree (same start
// time). It returns once every one is gone (a zombie waiting for its
// parent's wait counts as gone), or an error naming those that stay.
func (p Root) StopTree(pid int, grace time.Duration) error {
	tree := p.Tree(pid)
	if len(tree) == 0 {
		return nil
	}
	signal := func(sig syscall.Signal) {
		if st, err := p.ReadStat(pid); err == nil && st.StartTime == tree[0].StartTime && st.PGRP == pid {
			syscall.Kill(-pid, sig)
		}
		for _, pr := range tree {
			if p.alive(pr) {
				syscall.Kill(pr.PID, sig)
			}
		}
	}
	// grow adds what the live members forked since the last look.
	grow := func() {
		for _, pr := range slices.Clone(tree) {
			if !p.alive(pr) {
				continue
			}
			for _, c := range p.Tree(pr.PID) {
				if !slices.Contains(tree, c) {
					tree = append(tree, c)
				}
			}
		}
	}
	living := func() []Proc {
		var out []Proc
		for _, pr := range tree {
			if p.alive(pr) {
				out = append(out, pr)
			}
		}
		return out
	}
	wait := func(d time.Duration) []Proc {
		end := time.Now().Add(d)
		for {
			left := living()
			if len(left) == 0 || time.Now().After(end) {
				return left
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	signal(syscall.SIGTERM)
	if len(wait(grace)) == 0 {
		return nil
	}
	grow()
	signal(syscall.SIGKILL)
	left := wait(5 * time.Second)
	if len(left) == 0 {
		return nil
	}
	names := make([]string, len(left))
	for i, pr := range left {
		names[i] = p.Describe(pr.PID)
	}
	return fmt.Errorf("procfs: %s still running after SIGKILL: %s", p.Describe(pid), strings.Join(names, ", "))
}
