package rig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		status string
		want   []int64
	}{
		{"Name:\tredis-server\nNSpid:\t4242\n", []int64{4242}},
		{"NSpid:\t4242\t1\n", []int64{4242, 1}},
		{"Name:\tx\n", nil},
		{"NSpid:\t4242\tx\n", nil},
	}
	for _, tt := range tests {
		if got := ParseNSpid([]byte(tt.status)); !slices.Equal(got, tt.want) {
			t.Errorf("parseNSpid(%q) = %v, want %v", tt.status, got, tt.want)
		}
	}
}

// TestProveOwner proves ownership of a real socket this test process
// listens on, and refuses other processes with both pids named.
func TestProveOwner(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	proc := ProcRoot("/proc")
	self := os.Getpid()

	proof, err := proc.proveOwner(addr, self)
	if err != nil || proof.PID != self || proof.Inode == 0 || proof.Listen != addr {
		t.Errorf("own socket: got %+v, %v; want pid %d proven on %s", proof, err, self, addr)
	}
	found, err := proc.proveOwner(addr, 0)
	if err != nil || found.PID != self || !found.Found {
		t.Errorf("owner not given: got %+v, %v; want pid %d found", found, err, self)
	}

	other := exec.Command("sleep", "60")
	other.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	_, err = proc.proveOwner(addr, other.Process.Pid)
	want := fmt.Sprintf("pid %d (sleep) does not own the socket listening on %s", other.Process.Pid, addr)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("): pid %d (", self)) || !errors.Is(err, ErrWrongProcess) || !errors.Is(err, fault.ErrRefused) {
		t.Errorf("unrelated pid: got %v, want ErrWrongProcess containing %q", err, want)
	}

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	_, err = proc.proveOwner(addr, dead.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--server-pid %d: no such process", dead.Process.Pid)) {
		t.Errorf("dead pid: got %v, want a refusal naming it", err)
	}

	l.Close()
	if _, err := proc.ProveServer(context.Background(), Access{}, addr, self); err == nil || !strings.Contains(err.Error(), "connection refused") || !errors.Is(err, fault.ErrRefused) {
		t.Errorf("nothing listening: got %v, want a refusal saying connection refused", err)
	}
}

func TestCheckInfoPID(t *testing.T) {
	proc := ProcRoot("/proc")
	self := os.Getpid()
	tests := []struct {
		info map[string]string
		want string // "" = agrees
	}{
		{map[string]string{}, ""},
		{map[string]string{"process_id": fmt.Sprint(self)}, ""},
		{map[string]string{"process_id": "1"}, fmt.Sprintf("says its process_id is 1 (INFO server), but pid %d", self)},
		{map[string]string{"process_id": "x"}, `process_id "x" is not a pid`},
	}
	for _, tt := range tests {
		proof := results.OwnerProof{Addr: "127.0.0.1:1", PID: self}
		err := proc.checkInfoPID(&proof, tt.info)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("INFO %v: got %v, want %q", tt.info, err, tt.want)
		}
	}
}
