package orchestrator

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// launcherCmd is a --server-cmd that starts redis-server through a shell
// that forks it and keeps running (as dotnet runs GarnetServer.dll).
func launcherCmd(t *testing.T) string {
	redis := testenv.MustLookPath(t, "redis-server")
	return fmt.Sprintf(`sh -c '%s --port {port} --bind {bind} --dir "{data}" --save "" --appendonly no & wait'`, redis)
}

// checkServersBundle checks a --scenario memory bundle of tierbench,
// redis and the launched redis: one table with a line per server, each
// row's server proven (the launched one behind its shell), its command
// and INFO evidence recorded, every pass shown, and nothing of any of
// them left: no process, nothing listening.
func checkServersBundle(t *testing.T, bin, out, stdout string, cmd bool) {
	t.Helper()
	want := []string{"tierbench", "redis"}
	if cmd {
		want = append(want, "cmd")
	}
	if !strings.HasPrefix(stdout, "| server ") || strings.Contains(stdout, "*") {
		t.Errorf("table: got\n%s\nwant a server column first and every cell shown", stdout)
	}
	for _, s := range want {
		if !strings.Contains(stdout, "| "+s+" ") {
			t.Errorf("table: got\n%s\nwant a line of server %s", stdout, s)
		}
	}
	recs, loads, _ := results.ReadCells(out)
	if len(loads) != len(want) || len(recs) != 2*len(want) {
		t.Fatalf("cells.jsonl: got %d loads and %d passes, want %d and %d", len(loads), len(recs), len(want), 2*len(want))
	}
	for _, l := range loads {
		name := l.Row.ServerName()
		if l.Acknowledged != 200000 || l.ServerKeys != 200000 || l.Sample == nil || l.Sample.Missed != 0 {
			t.Errorf("%s: load %d acknowledged, %d keys, sample %+v; want the exact load and no sampled miss", name, l.Acknowledged, l.ServerKeys, l.Sample)
		}
		if l.Owner == nil || l.Owner.PID <= 0 {
			t.Errorf("%s: no owner proof", name)
			continue
		}
		comm := map[string]string{"tierbench": "tierbench", "redis": "redis-server", "cmd": "redis-server"}[name]
		if l.Owner.Command != comm {
			t.Errorf("%s: proven owner %d is %q, want %s (the real server, behind its launcher for cmd)", name, l.Owner.PID, l.Owner.Command, comm)
		}
		if !strings.Contains(l.ServerCommand, map[string]string{"tierbench": " server --port ", "redis": "redis-server", "cmd": "sh -c "}[name]) || !strings.Contains(l.ServerCommand, "--port ") {
			t.Errorf("%s: command as run %q", name, l.ServerCommand)
		}
		if name == "redis" && l.ServerEvidence["server:redis_version"] == "" {
			t.Errorf("redis: evidence %v, want INFO server's redis_version", l.ServerEvidence)
		}
		// Stopped with its whole tree: the proven process is gone and
		// nothing listens where it did.
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", l.Owner.PID)); err == nil && !zombie(l.Owner.PID) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", l.Owner.PID)); strings.TrimSpace(string(comm)) == l.Owner.Command {
				t.Errorf("%s: pid %d (%s) still runs after the run", name, l.Owner.PID, l.Owner.Command)
			}
		}
		if c, err := net.DialTimeout("tcp", l.Owner.Addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s: something still listens on %s", name, l.Owner.Addr)
		}
	}
	for _, rec := range recs {
		if rec.ReadBytesPerGet >= results.MaxMemorySectorShare*results.SectorBytes {
			t.Errorf("%s t=%d: %.1f device bytes per GET, want the memory scenario's under 1 %% of a sector", rec.Row.ID(), rec.Threads, rec.ReadBytesPerGet)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	if !strings.Contains(string(report), "redis Memory") || !strings.Contains(string(report), "redis-server") {
		t.Errorf("report.md names no redis row or its command:\n%s", report)
	}
	assertNoProcesses(t, bin)
	// compare shows the servers apart.
	cmp := runBinary(t, bin, "compare", out, out)
	if cmp.code != 0 {
		t.Fatalf("compare: exit %d:\n%s", cmp.code, cmp.stderr)
	}
	for _, line := range []string{"| server | backend | NUMA | threads |", "| tierbench | Memory |", "| redis | Memory |"} {
		if !strings.Contains(cmp.stdout, line) {
			t.Errorf("compare: got\n%s\nwant a line containing %q", cmp.stdout, line)
		}
	}
}

// TestRunServersProcess: --scenario memory --server tierbench,redis and a
// --server-cmd launcher under the process runtime.
func TestRunServersProcess(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioMemory, "--server", "tierbench,redis", "--server-cmd", launcherCmd(t))...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	checkServersBundle(t, bin, filepath.Join(base, "out"), r.stdout, true)
	if want := "servers: WARNING: cmd runs without a password: its template has no {password_file}"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr: got\n%s\nwant a line saying %q", r.stderr, want)
	}
}

// TestRunServersDocker: the same with tierbench's image and the redis
// image this test builds FROM scratch from the host's redis-server,
// nothing pulled.
func TestRunServersDocker(t *testing.T) {
	image := testenv.MustRedisImage(t)
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioMemory, "--server", "tierbench,redis", "--runtime", "docker", "--server-image", image)...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	checkServersBundle(t, bin, filepath.Join(base, "out"), r.stdout, false)
	r = runBinary(t, bin, scenarioArgs(base, results.ScenarioMemory, "--server", "redis", "--runtime", "docker", "--server-image", "tierbench-test-absent:none")...)
	if r.code != 2 || !strings.Contains(r.stderr, "docker pull tierbench-test-absent:none") {
		t.Errorf("an absent image: exit %d, want 2 with the docker pull line:\n%s", r.code, r.stderr)
	}
}

// TestRunServerCmdStorage: the storage scenario with --server-cmd
// starting tierbench's server under another name (a copy of the binary)
// through a launcher script that forks it and stays: the copy is found
// behind the script, and its reads are proven on the device from its own
// /proc/<pid>/io.
func TestRunServerCmdStorage(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	tools := t.TempDir()
	copyFile(t, bin, filepath.Join(tools, "kvd"), 0o755)
	launcher := filepath.Join(tools, "launch-kvd")
	os.WriteFile(launcher, []byte("#!/bin/sh\n\"$(dirname \"$0\")/kvd\" server \"$@\" &\nwait\n"), 0o755)
	tmpl := launcher + " --port {port} --bind {bind} --memory {memory} --page {page} --segment {segment} --index {index} " +
		"--storage-tier --logdir {data} --device-type native --device-io-backend {backend}"
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioStorage, "--server-cmd", tmpl, "--backends", "libaio")...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	out := filepath.Join(base, "out")
	recs, loads, _ := results.ReadCells(out)
	if len(loads) != 1 || loads[0].Owner == nil || loads[0].Owner.Command != "kvd" {
		t.Fatalf("loads %+v: want one, proven on kvd (behind launch-kvd)", loads)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d passes, want 2", len(recs))
	}
	for _, rec := range recs {
		if rec.ReadBytesPerGet < results.MinSectorShare*results.SectorBytes || rec.MemoryServed {
			t.Errorf("t=%d: %.0f device bytes per GET, want ≥ %.0f (reads on the device)", rec.Threads, rec.ReadBytesPerGet, results.MinSectorShare*results.SectorBytes)
		}
	}
	if !strings.Contains(r.stdout, "| cmd ") || strings.Contains(r.stdout, "*") {
		t.Errorf("table: got\n%s\nwant the cmd row, every cell shown", r.stdout)
	}
	assertNoProcesses(t, filepath.Join(tools, "kvd"))
	if err := syscall.Kill(loads[0].Owner.PID, 0); err == nil && !zombie(loads[0].Owner.PID) {
		t.Errorf("kvd pid %d still runs", loads[0].Owner.PID)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}
