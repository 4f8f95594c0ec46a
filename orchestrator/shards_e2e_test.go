package orchestrator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// cellsOf reads cells.jsonl's load and pass records.
func cellsOf(t *testing.T, out string) ([]results.LoadRecord, []results.PassRecord) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, results.FileCells))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var loads []results.LoadRecord
	var passes []results.PassRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var kind struct{ Kind string }
		json.Unmarshal(sc.Bytes(), &kind)
		switch kind.Kind {
		case "load":
			var l results.LoadRecord
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			loads = append(loads, l)
		case "pass":
			var p results.PassRecord
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			passes = append(passes, p)
		}
	}
	return loads, passes
}

// TestShardsRun is `run --shards 1,2 --profile quick` at a small size: one
// row per shard count, the two shards each with their own CPU, the load
// checked per shard, device reads counted per shard, and nothing left
// running or on disk.
func TestShardsRun(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	const dbsize = 400000 // 200 000 keys a shard: ≥ 20 × --memory 1m each
	args := []string{"run", "--profile", "quick", "--shards", "1,2", "--backends", "uring", "--pin", "none", "--runtime", "process",
		"--dbsize", strconv.Itoa(dbsize), "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1",
		"--load-threads", "4", "--no-fio", "--data", data, "--out", out, "--state-dir", filepath.Join(base, "state")}
	r := runBinary(t, bin, args...)
	if r.code != 0 {
		t.Fatalf("run --shards 1,2: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range []string{"| Uring   | 1 shard / no pin  |", "| Uring   | 2 shards / no pin |"} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("table lacks the row %q:\n%s", row, r.stdout)
		}
	}
	loads, passes := cellsOf(t, out)
	if len(loads) != 2 {
		t.Fatalf("%d load records, want 2", len(loads))
	}
	sharded := loads[1]
	if sharded.Row.Shards != 2 || len(sharded.Nodes) != 2 || sharded.ServerKeys != dbsize || sharded.Acknowledged != dbsize {
		t.Fatalf("sharded load: row %+v, %d nodes, %d keys, %d acknowledged; want 2 nodes holding %d", sharded.Row, len(sharded.Nodes), sharded.ServerKeys, sharded.Acknowledged, dbsize)
	}
	cpus := map[string]bool{}
	var sum int64
	for _, n := range sharded.Nodes {
		if n.ServerKeys != n.Acknowledged || n.ServerKeys < dbsize/3 || !n.Tiered || n.Owner == nil || n.Sample == nil || n.Sample.Missed != 0 || n.Sample.Keys == 0 {
			t.Errorf("node %+v: want its DBSIZE equal to what it acknowledged, tiered, its pid proven and its sampled GETs all hits", n)
		}
		if !strings.HasPrefix(n.DataDir, data) {
			t.Errorf("node %s data dir %q is not under %s", n.Addr, n.DataDir, data)
		}
		cpus[n.Server.CPUs] = true
		sum += n.ServerKeys
	}
	if sum != dbsize || len(cpus) != 2 {
		t.Errorf("shards hold %d keys in all (want %d) on CPU sets %v (want two distinct)", sum, dbsize, cpus)
	}
	for _, p := range passes {
		if p.CPUMicrosPerOp <= 0 || p.ServerCPUSeconds <= 0 {
			t.Errorf("pass %s t=%d: CPU per op %v, server CPU %v s: want both measured", p.Row.Label, p.Threads, p.CPUMicrosPerOp, p.ServerCPUSeconds)
		}
		if p.Row.Shards != 2 {
			continue
		}
		var rb, ops int64
		for _, n := range p.Nodes {
			if n.Ops == 0 || n.ReadBytesPerGet < 0.9*results.SectorBytes {
				t.Errorf("pass t=%d node %s: %d ops, %.0f device bytes per GET: want device-bound reads on every shard", p.Threads, n.Addr, n.Ops, n.ReadBytesPerGet)
			}
			rb += n.ReadBytes
			ops += n.Ops
		}
		if len(p.Nodes) != 2 || rb != p.ReadBytes || ops != p.Ops {
			t.Errorf("pass t=%d: %d nodes reading %d bytes for %d ops; the pass says %d bytes, %d ops", p.Threads, len(p.Nodes), rb, ops, p.ReadBytes, p.Ops)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	for _, want := range []string{"## CPU per GET", "## Cluster nodes", "2 shards / no pin"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	assertNoProcesses(t, bin)
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Errorf("data dir still holds %d entries after the run", len(left))
	}
}

// TestShardsLocalMemory is `run --scenario localmemory --shards 1,2` at a
// small size: each shard a tiered server on the in-RAM device with its
// own CPU, its own INFO store counter judged (≥ 0.9 device reads per GET
// on every shard, summing to the pass's), and nothing left running.
func TestShardsLocalMemory(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	const dbsize = 400000 // 200 000 keys a shard: ≥ 20 × --memory 1m each
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioLocalMemory, "--shards", "1,2", "--dbsize", strconv.Itoa(dbsize), "--threads", "2", "--batch", "256")...)
	if r.code != 0 {
		t.Fatalf("--scenario localmemory --shards 1,2: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range []string{"| Localmemory | -b 256, 1 shard / no pin  |", "| Localmemory | -b 256, 2 shards / no pin |"} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("table lacks the row %q:\n%s", row, r.stdout)
		}
	}
	out := filepath.Join(base, "out")
	loads, passes := cellsOf(t, out)
	if len(loads) != 2 || len(loads[1].Nodes) != 2 || loads[1].ServerKeys != dbsize {
		t.Fatalf("loads %+v: want two, the second over 2 shards holding %d keys", loads, dbsize)
	}
	cpus := map[string]bool{}
	for _, n := range loads[1].Nodes {
		cpus[n.Server.CPUs] = true
		if !n.Tiered || n.ServerKeys != n.Acknowledged || n.ServerKeys == 0 {
			t.Errorf("shard %s: tiered %v, %d keys, %d acknowledged; want a tiered shard holding what it acknowledged", n.Addr, n.Tiered, n.ServerKeys, n.Acknowledged)
		}
	}
	if len(cpus) != 2 {
		t.Errorf("shards on CPU sets %v, want two distinct", cpus)
	}
	var sharded int
	for _, p := range passes {
		if p.DeviceReadsPerGet < results.MinDeviceReadsPerGet || p.NoDeviceReads || p.CPUMicrosPerOp <= 0 {
			t.Errorf("pass %s: %.2f device reads per GET (no-device-reads %v), CPU %.2f µs per op; want ≥ %.1f and CPU measured", p.Row.Label, p.DeviceReadsPerGet, p.NoDeviceReads, p.CPUMicrosPerOp, results.MinDeviceReadsPerGet)
		}
		if p.Row.Shards != 2 {
			continue
		}
		sharded++
		var reads int64
		for _, n := range p.Nodes {
			if n.Ops == 0 || n.DeviceReadsPerGet < results.MinDeviceReadsPerGet {
				t.Errorf("pass shard %s: %d ops, %.2f device reads per GET; want ≥ %.1f on every shard", n.Addr, n.Ops, n.DeviceReadsPerGet, results.MinDeviceReadsPerGet)
			}
			reads += n.DeviceReads
		}
		if len(p.Nodes) != 2 || reads != p.DeviceReads {
			t.Errorf("sharded pass: %d shards counting %d device reads, the pass says %d; want 2 summing to it", len(p.Nodes), reads, p.DeviceReads)
		}
	}
	if sharded != 1 {
		t.Errorf("%d sharded passes, want 1", sharded)
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	for _, want := range []string{"## CPU per GET", "## Cluster nodes", "device reads/GET"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	assertNoProcesses(t, bin)
}

// TestRunAgainstRedisCluster measures a real three-master Redis Cluster
// through one of its nodes: the masters are found, the pids given in any
// order are matched to their nodes by their listening sockets, the load
// is checked per node, and redis's memory-served reads are kept out.
func TestRunAgainstRedisCluster(t *testing.T) {
	bin := testenv.MustBinary(t)
	rc := testenv.MustRedisCluster(t, 3)
	base := testenv.MustDiskDir(t)
	pids := []string{strconv.Itoa(rc.Nodes[2].Cmd.Process.Pid), strconv.Itoa(rc.Nodes[0].Cmd.Process.Pid), strconv.Itoa(rc.Nodes[1].Cmd.Process.Pid)}
	r := runBinary(t, bin, externalArgs(base, "cluster", rc.Nodes[1].Addr, "--dbsize", "20000", "--server-pid", strings.Join(pids, ","))...)
	if r.code != ExitNothing {
		t.Fatalf("exit %d, want %d (redis serves from memory: every cell kept out)\nstdout:\n%s\nstderr:\n%s", r.code, ExitNothing, r.stdout, r.stderr)
	}
	loads, passes := cellsOf(t, filepath.Join(base, "cluster"))
	if len(loads) != 1 || len(loads[0].Nodes) != 3 || loads[0].ServerKeys != 20000 {
		t.Fatalf("loads %+v: want one with 3 nodes holding 20000 keys", loads)
	}
	pidOf := map[string]int{}
	for _, n := range rc.Nodes {
		pidOf[n.Addr] = n.Cmd.Process.Pid
	}
	for _, n := range loads[0].Nodes {
		if n.Owner == nil || n.Owner.PID != pidOf[n.Addr] || n.ServerKeys != n.Acknowledged || n.Slots == 0 {
			t.Errorf("node %s: owner %+v, %d keys, %d acknowledged, %d slots; want pid %d proven and its keys all acknowledged", n.Addr, n.Owner, n.ServerKeys, n.Acknowledged, n.Slots, pidOf[n.Addr])
		}
	}
	if len(passes) != 1 || len(passes[0].Nodes) != 3 || passes[0].Ops == 0 || !passes[0].MemoryServed {
		t.Errorf("passes %+v: want one over 3 nodes, judged memory-served", passes)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("cluster node %s", rc.Nodes[0].Addr)) {
		t.Errorf("stderr does not name the masters it found:\n%s", r.stderr)
	}

	// A pid list for one server that is no cluster is refused.
	single := testenv.MustRedisServer(t)
	r = runBinary(t, bin, externalArgs(base, "single", single.Addr, "--dbsize", "100", "--server-pid", pids[0]+","+pids[1])...)
	if r.code != 2 || !strings.Contains(r.stderr, "is not a cluster node") {
		t.Errorf("a pid list for a single redis-server: exit %d, stderr %q; want 2 naming it", r.code, r.stderr)
	}
}
