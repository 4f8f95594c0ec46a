package orchestrator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/freeze"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// These tests drive the real binary — `tierbench run` as a child process,
// which starts real `tierbench server` and `tierbench bench` processes or
// containers — at a tiny size that still keeps the dataset ≥ 20 × the
// server's --memory: 200 000 × 128 B = 24 MiB against --memory 1m.

func tinyArgs(t *testing.T, data, out string) []string {
	return []string{"run", "--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1",
		"--load-threads", "4", "--no-fio", "--data", data, "--out", out, "--state-dir", filepath.Join(data, "..", "state")}
}

// processesOf lists the live processes running the binary at path.
func processesOf(path string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != path {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

func assertNoProcesses(t *testing.T, bin string) {
	t.Helper()
	// Reaping by init may take a moment after the run exits.
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesOf(bin)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind: %q", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkBundle checks a finished bundle and returns its plan.
// hostCountsSteal reports whether this host's /proc/stat counts steal,
// so that every measured phase must report it.
func hostCountsSteal() bool {
	s, err := cpustat.Read("/")
	return err == nil && s.HasSteal
}

// perfEventsAllowed says whether the client can measure the host's
// freezes here (package freeze).
func perfEventsAllowed() bool {
	p, err := freeze.Start(time.Millisecond)
	if err != nil {
		return false
	}
	p.Stop()
	return true
}

func checkBundle(t *testing.T, out, stdout string, rows, passes int) results.Plan {
	t.Helper()
	for _, f := range []string{results.FileFingerprint, results.FilePreflight, results.FileCells, results.FileResults, results.FileTable, results.FileReport, results.FilePlan} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("bundle file %s: %v (want it, non-empty)", f, err)
		}
	}
	var bundlePlan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &bundlePlan); err != nil {
		t.Fatal(err)
	}
	var res results.Results
	if err := results.ReadJSON(out, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != results.SchemaVersion {
		t.Errorf("results.json schema_version %d, want %d", res.Schema, results.SchemaVersion)
	}
	table, _ := os.ReadFile(filepath.Join(out, results.FileTable))
	if string(table) != stdout {
		t.Errorf("stdout is not table.md:\nstdout:\n%s\ntable.md:\n%s", stdout, table)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 2+rows || !strings.HasPrefix(lines[0], "| backend | NUMA") {
		t.Fatalf("table: got\n%s\nwant a header and %d rows", stdout, rows)
	}
	for _, l := range lines[2 : 2+rows] {
		if strings.Contains(l, "—") || strings.Contains(l, "*") {
			t.Errorf("table row %q: want every cell measured and shown", l)
		}
	}
	recs, loads, err := results.ReadCells(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := rows * 2 * passes; len(recs) != want {
		t.Errorf("cells.jsonl: got %d pass records, want %d", len(recs), want)
	}
	if len(loads) < rows {
		t.Errorf("cells.jsonl: got %d load records, want ≥ %d", len(loads), rows)
	}
	for _, l := range loads {
		if l.Acknowledged != 200000 || l.ServerKeys != 200000 || !l.Tiered || l.DeviceShare < 0.95 {
			t.Errorf("load record %+v: want 200000 acknowledged and held, tiered, ≥ 95 %% on the device", l)
		}
	}
	for _, r := range recs {
		if r.ReadBytesPerGet < results.MinSectorShare*results.SectorBytes || r.Server.CPUs == "" || r.Client.CPUs == "" {
			t.Errorf("pass %+v: want ≥ %.0f device bytes per GET and recorded placements", r, results.MinSectorShare*results.SectorBytes)
		}
		// The disk below the data dir completed at least half a read per
		// GET (other processes' reads only add), at a positive depth, and
		// the server spent CPU on the phase.
		if len(r.DiskDevices) == 0 || float64(r.DiskReads) < 0.5*float64(r.Ops) || r.DiskQueueDepth <= 0 || r.DiskReadsPerSec <= 0 ||
			r.ServerCPUSeconds <= 0 || r.ServerCPUs < 1 || r.ServerCPUShare <= 0 ||
			r.ServerSystemCPUSeconds <= 0 || r.ServerSystemCPUSeconds > r.ServerCPUSeconds {
			t.Errorf("pass t=%d %s: disk %v %d reads (%.0f r/s, depth %.1f; %s), server %.2f CPU s (%.2f s system) of %d CPUs (%s); want disk reads ≥ half the %d GETs, a depth and server CPU, part of it in the kernel",
				r.Threads, r.Row.ID(), r.DiskDevices, r.DiskReads, r.DiskReadsPerSec, r.DiskQueueDepth, r.DiskNote, r.ServerCPUSeconds, r.ServerSystemCPUSeconds, r.ServerCPUs, r.CPUNote, r.Ops)
		}
		if s := r.HostStealShare; hostCountsSteal() && (s == nil || *s < 0 || *s > 1) {
			t.Errorf("pass t=%d %s: got host steal %v, want the share the client read", r.Threads, r.Row.ID(), s)
		}
		if s := r.ServerStealShare; hostCountsSteal() && (s == nil || *s < 0 || *s > 1) {
			t.Errorf("pass t=%d %s: got server steal %v, want the share of its CPUs %s", r.Threads, r.Row.ID(), s, r.Server.CPUs)
		}
		if r.Row.Pin == plan.PinPinned && (!rig.SameSet(r.Server.CPUs, r.Server.WantCPUs) || !rig.SameSet(r.Client.CPUs, r.Client.WantCPUs) || r.Server.WantCPUs == r.Client.WantCPUs) {
			t.Errorf("pinned pass: server %+v client %+v; want disjoint sets honoured", r.Server, r.Client)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	if !strings.Contains(string(report), "## Disk and CPU evidence") || strings.Contains(string(report), "No disk evidence") {
		t.Errorf("report.md lacks the disk evidence:\n%s", report)
	}
	logs, _ := os.ReadDir(filepath.Join(out, results.DirLogs))
	var servers int
	for _, l := range logs {
		if strings.HasPrefix(l.Name(), "server-") {
			servers++
		}
	}
	if servers != rows {
		t.Errorf("logs/: got %d server logs, want %d", servers, rows)
	}
	return bundlePlan
}

func TestRunProcess(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")

	// Processes left by a run that died: its pid file names an owner that
	// is gone. The new run kills the one that run started (its
	// environment names the run) and says so; a process the file names
	// that the run did not start survives, whatever the file says.
	child := testenv.StartSleeper(t, safe.EnvRunID+"=old-run")
	planted := testenv.StartSleeper(t)
	childDone := make(chan struct{})
	go func() { child.Wait(); close(childDone) }()
	os.MkdirAll(filepath.Join(base, "state"), 0o700)
	os.WriteFile(filepath.Join(base, "state", "old-run.pids"),
		fmt.Appendf(nil, "999999999 1\n%d %d\n%d %d\n", child.Process.Pid, safe.StartTime(child.Process.Pid), planted.Process.Pid, safe.StartTime(planted.Process.Pid)), 0o600)

	r := runBinary(t, bin, append(tinyArgs(t, data, out), "--runtime", "process")...)
	if r.code != 0 {
		t.Fatalf("run exited %d:\n%s", r.code, r.stderr)
	}
	select {
	case <-childDone:
	case <-time.After(5 * time.Second):
		t.Errorf("the stale child %d was not removed", child.Process.Pid)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("cleanup: killed process %d", child.Process.Pid)) {
		t.Errorf("stderr does not say the stale child was removed:\n%s", r.stderr)
	}
	if syscall.Kill(planted.Process.Pid, 0) != nil || !strings.Contains(r.stderr, fmt.Sprintf("left process %d alone", planted.Process.Pid)) {
		t.Errorf("the planted process %d: want it alive and said so:\n%s", planted.Process.Pid, r.stderr)
	}
	for _, want := range []string{"cell 1/8", "s left", "loading 200000 keys"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}
	bundlePlan := checkBundle(t, out, r.stdout, 4, 1)
	if bundlePlan.Runtime != plan.RuntimeProcess {
		t.Errorf("bundlePlan runtime %q, want process", bundlePlan.Runtime)
	}
	// The run created --data: a finished run removes it with the last
	// row's segment files.
	if _, err := os.Stat(data); !os.IsNotExist(err) || !strings.Contains(r.stderr, "cleanup: removed the segment files in "+data) {
		t.Errorf("data dir after the run: stat %v; want it removed and said so:\n%s", err, r.stderr)
	}
	assertNoProcesses(t, bin)
	if files, _ := filepath.Glob(filepath.Join(base, "state", "*.pids")); len(files) != 0 {
		t.Errorf("pid files left: %v", files)
	}

	// The finished bundle verifies against the sums results.json records.
	if v := runBinary(t, bin, "report", "--verify", out); v.code != 0 || !strings.HasPrefix(v.stdout, "ok ") {
		t.Errorf("report --verify of the run's bundle exited %d:\n%s%s", v.code, v.stdout, v.stderr)
	}
	// tierbench report renders the same table again from the sealed bundle.
	rep := runBinary(t, bin, "report", out)
	if rep.code != 0 || rep.stdout != r.stdout {
		t.Errorf("report exited %d with\n%s\nwant the run's table\n%s\nstderr: %s", rep.code, rep.stdout, r.stdout, rep.stderr)
	}
	// With a file gone the sums fail: a plain report refuses, and only
	// --resign renders it again (and records why).
	os.Remove(filepath.Join(out, results.FileTable))
	if rep := runBinary(t, bin, "report", out); rep.code != 1 {
		t.Errorf("report of a bundle missing table.md: exit %d, want 1 (refused)\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
	// --resume would seal the change too: refused before anything starts.
	if res := runBinary(t, bin, "run", "--resume", out, "--state-dir", filepath.Join(base, "state")); res.code != 2 || !strings.Contains(res.stderr, "table.md is missing") {
		t.Errorf("run --resume of a bundle missing table.md: exit %d, want 2 naming table.md\n%s", res.code, res.stderr)
	}
	rep = runBinary(t, bin, "report", "--resign", "table.md removed by the test", out)
	if rep.code != 0 || rep.stdout != r.stdout {
		t.Errorf("report --resign exited %d with\n%s\nwant the run's table\n%s\nstderr: %s", rep.code, rep.stdout, r.stdout, rep.stderr)
	}
	if rep := runBinary(t, bin, "report"); rep.code != 2 {
		t.Errorf("report without a dir: exit %d, want 2", rep.code)
	}
}

// removeImageAfter removes the image a run builds for bin when the test
// ends, so test runs do not pile up images of every binary they built.
func removeImageAfter(t *testing.T, cli *client.Client, bin string) {
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	tag := "tierbench:" + hex.EncodeToString(sum[:6])
	t.Cleanup(func() { cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{PruneChildren: true}) })
}

func containersLabelled(t *testing.T, cli *client.Client, label string) []container.Summary {
	t.Helper()
	list, err := cli.ContainerList(t.Context(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func TestRunDocker(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")

	// A container left by a run whose owner is gone.
	d, err := docker.NewDriver(t.Context(), docker.Endpoint{}, bin, "stale-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Engine.Close() })
	d.Owner = "999999999:1"
	staleID, err := d.Create(t.Context(), "server", "stale", []string{"server", "--port", strconv.Itoa(testenv.FreePort(t)), "--bind", "127.0.0.1"}, "", "", false, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), staleID, client.ContainerRemoveOptions{Force: true}) })

	// --data relative to the current directory: made absolute before
	// Docker sees it, so it bind-mounts that directory rather than
	// creating a named volume "data".
	_, volumeBefore := cli.VolumeInspect(t.Context(), "data", client.VolumeInspectOptions{})
	r := runBinaryIn(t, base, nil, bin, append(tinyArgs(t, "data", out), "--runtime", "docker")...)
	if r.code != 0 {
		t.Fatalf("run exited %d:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "cleanup: removed the segment files in "+data) {
		t.Errorf("stderr does not say the run emptied %s:\n%s", data, r.stderr)
	}
	if _, err := cli.VolumeInspect(t.Context(), "data", client.VolumeInspectOptions{}); err == nil && volumeBefore != nil {
		t.Errorf("the run created a Docker volume named data")
	}
	if !strings.Contains(r.stderr, "cleanup: removed container tierbench-stale-") {
		t.Errorf("stderr does not say the stale container was removed:\n%s", r.stderr)
	}
	if _, err := cli.ContainerInspect(t.Context(), staleID, client.ContainerInspectOptions{}); err == nil {
		t.Errorf("stale container %s still exists", staleID[:12])
	}
	bundlePlan := checkBundle(t, out, r.stdout, 4, 1)
	if bundlePlan.Runtime != plan.RuntimeDocker {
		t.Errorf("bundlePlan runtime %q, want docker", bundlePlan.Runtime)
	}
	if left := containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID); len(left) != 0 {
		t.Errorf("containers left with label %s=%s: %d", docker.LabelRun, bundlePlan.RunID, len(left))
	}
	_, loads, _ := results.ReadCells(out)
	for _, l := range loads {
		if !strings.HasPrefix(l.ServerMode, "docker") {
			t.Errorf("load record server mode %q, want a docker mode", l.ServerMode)
		}
		if l.Row.Backend == "uring" && !strings.Contains(l.UringProbe, "io_uring pass") {
			t.Errorf("uring row: io_uring probe %q, want preflight's io_uring check passed inside the container", l.UringProbe)
		}
	}
	logs, _ := os.ReadDir(filepath.Join(out, results.DirLogs))
	var nonEmpty int
	for _, l := range logs {
		if st, _ := os.Stat(filepath.Join(out, results.DirLogs, l.Name())); st != nil && st.Size() > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 8 {
		t.Errorf("logs/: %d non-empty container logs, want server and client logs of every row", nonEmpty)
	}
}

func TestRunInterruptAndResume(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := append(tinyArgs(t, data, out), "--runtime", "process", "--backends", "libaio", "--passes", "2", "--cell-seconds", "2")
	run := startBackground(t, bin, args...)
	// Wait for two finished passes, then interrupt in the middle of the third.
	run.waitPasses(t, out, 2)
	time.Sleep(700 * time.Millisecond)
	run.interrupt(t)
	if !strings.Contains(run.stderr.String(), "--resume "+out) {
		t.Errorf("stderr does not say how to resume:\n%s", run.stderr.String())
	}
	assertNoProcesses(t, bin)
	before, _, err := results.ReadCells(out)
	if err != nil || len(before) < 2 || len(before) >= 8 {
		t.Fatalf("after SIGINT: %d passes in cells.jsonl (%v); want the finished ones, at least 2 and not all 8", len(before), err)
	}

	r := runBinary(t, bin, "run", "--resume", out, "--state-dir", filepath.Join(base, "state"))
	if r.code != 0 {
		t.Fatalf("resume exited %d:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("cell 1/%d", 8-len(before))) {
		t.Errorf("resume did not skip the %d finished passes:\n%s", len(before), r.stderr)
	}
	checkBundle(t, out, r.stdout, 2, 2)
	recs, _, _ := results.ReadCells(out)
	seen := map[string]bool{}
	for _, rec := range recs {
		k := results.PassKey(rec.Row, rec.Threads, rec.Pass)
		if seen[k] {
			t.Errorf("pass %s measured twice", k)
		}
		seen[k] = true
	}
	assertNoProcesses(t, bin)
}

func TestRunExternalSkipLoadRefusesPartialLoad(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustRedisServer(t)
	base := testenv.MustDiskDir(t)
	// 1 % of the keys: 2 000 of 200 000.
	load := runBinary(t, bin, "bench", "--port", strconv.Itoa(redis.Port), "--dbsize", "2000", "--keylength", "16", "--valuelength", "96", "--runtime", "0", "--json")
	if load.code != 0 {
		t.Fatalf("loading redis: exit %d: %s", load.code, load.stderr)
	}
	common := []string{"run", "--server-addr", redis.Addr, "--skip-load", "--keylength", "16", "--valuelength", "96",
		"--threads", "2", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1", "--no-fio",
		"--data", filepath.Join(base, "data"), "--state-dir", filepath.Join(base, "state")}
	r := runBinary(t, bin, append(common, "--dbsize", "200000", "--out", filepath.Join(base, "partial"))...)
	if r.code != ExitNothing {
		t.Fatalf("partial load: exit %d, want %d (nothing publishable):\n%s", r.code, ExitNothing, r.stderr)
	}
	for _, want := range []string{"server holds 2000 keys, 198000 fewer than --dbsize 200000 (1.00 %)", "refusing to measure a partial load", "REFUSED"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "cell 1/") || !strings.Contains(r.stdout, "refused*") {
		t.Errorf("a refused row was measured, or its cells not marked refused*:\n%s\n%s", r.stdout, r.stderr)
	}

	// The full key count with the server's pid: measured, and the device
	// counter shows Redis answers from memory: nothing publishable.
	r = runBinary(t, bin, append(common, "--dbsize", "2000", "--server-pid", strconv.Itoa(redis.Cmd.Process.Pid), "--out", filepath.Join(base, "full"))...)
	if r.code != ExitNothing {
		t.Fatalf("full load: exit %d, want %d (every cell memory-served):\n%s", r.code, ExitNothing, r.stderr)
	}
	if !strings.Contains(r.stdout, "| External | no pin ("+redis.Addr+")") || !strings.Contains(r.stdout, "mem-served*") {
		t.Errorf("table for redis: got\n%s\nwant the external row marked mem-served*", r.stdout)
	}
	if !strings.Contains(r.stderr, "the only cell is kept out: External no pin ("+redis.Addr+") t=2 (memory-served)") {
		t.Errorf("stderr does not list the cell kept out:\n%s", r.stderr)
	}
}

func TestRunDeviceHitCatchesMemoryHeldDataset(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := tinyArgs(t, data, out)
	for i, a := range args {
		if a == "--memory" {
			args[i+1] = "64m" // holds the whole 24 MiB dataset
		}
	}
	// Without --force the plan is refused up front.
	r := runBinary(t, bin, append(slicesClone(args), "--runtime", "process", "--backends", "libaio", "--pin", "none")...)
	if r.code != 2 || !strings.Contains(r.stderr, "less than 20 × --memory 64m") {
		t.Errorf("dataset held in memory without --force: exit %d, stderr\n%s\nwant 2 and the 20 × memory refusal", r.code, r.stderr)
	}
	// With --force it measures, and the device-hit check keeps every cell out.
	r = runBinary(t, bin, append(args, "--runtime", "process", "--backends", "libaio", "--pin", "none", "--force", "--keep-data")...)
	if r.code != ExitNothing {
		t.Fatalf("every cell memory-served: exit %d, want %d:\n%s", r.code, ExitNothing, r.stderr)
	}
	if segs, _ := filepath.Glob(filepath.Join(data, "*")); len(segs) == 0 {
		t.Errorf("--keep-data: the data dir %s is empty after the run, want the last row's segment files", data)
	}
	if got := strings.Count(r.stdout, "mem-served*"); got != 3 { // two cells and the note
		t.Errorf("table: got\n%s\nwant both cells marked mem-served* and the note", r.stdout)
	}
	recs, _, _ := results.ReadCells(out)
	for _, rec := range recs {
		if !rec.MemoryServed || rec.ReadBytesPerGet > 64 {
			t.Errorf("pass %+v: want memory_served with next to no device bytes per GET", rec)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	if !strings.Contains(string(report), "mem-served*: the server read less than") {
		t.Errorf("report.md lacks the memory-served note")
	}
	var res results.Results
	results.ReadJSON(out, results.FileResults, &res)
	b, _ := json.Marshal(res.Cells)
	if !strings.Contains(string(b), `"excluded":"memory-served"`) {
		t.Errorf("results.json cells lack the memory-served exclusion: %s", b)
	}
	assertNoProcesses(t, bin)
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

func TestRunDockerSIGTERMRemovesContainers(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := append(tinyArgs(t, data, out), "--runtime", "docker", "--backends", "libaio", "--pin", "none", "--passes", "3", "--cell-seconds", "3")
	run := startBackground(t, bin, args...)
	run.waitPasses(t, out, 1)
	var bundlePlan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &bundlePlan); err != nil {
		t.Fatal(err)
	}
	// Mid-cell: the server and a client container are both running.
	time.Sleep(1500 * time.Millisecond)
	if n := len(containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID)); n == 0 {
		t.Errorf("no container of run %s running mid-cell", bundlePlan.RunID)
	}
	run.Stop(t, syscall.SIGTERM)
	if left := containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID); len(left) != 0 {
		t.Errorf("%d containers of run %s left after SIGTERM", len(left), bundlePlan.RunID)
	}
	if recs, _, _ := results.ReadCells(out); len(recs) < 1 {
		t.Errorf("the finished pass is gone from cells.jsonl")
	}
}

// TestRunSIGTERMDuringPreflight stops a run while its preflight's fio
// sweep runs: the run exits 143 and says it was stopped, not that its
// preflight failed (the child it killed, its command line, a --force hint
// that would not help), and leaves no process behind.
func TestRunSIGTERMDuringPreflight(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := slices.DeleteFunc(tinyArgs(t, data, out), func(a string) bool { return a == "--no-fio" })
	args = append(args, "--runtime", "process", "--backends", "libaio", "--pin", "none")
	run := startBackground(t, bin, args...)
	run.waitUntil(t, "a preflight running", 60*time.Second, func() bool {
		for _, p := range processesOf(bin) {
			if strings.Contains(p, " preflight ") {
				return true
			}
		}
		return false
	})
	run.Stop(t, syscall.SIGTERM)
	stderr := run.stderr.String()
	if !strings.Contains(stderr, "stopped by SIGTERM") {
		t.Errorf("stderr %q: want it to say the run was stopped by SIGTERM", stderr)
	}
	for _, noise := range []string{"--force", "preflight --data-dir", "signal: killed"} {
		if strings.Contains(stderr, noise) {
			t.Errorf("stderr %q: got %q in it, want only that the run was stopped", stderr, noise)
		}
	}
	assertNoProcesses(t, bin)
}

// TestProcessDriverPinsEveryChild starts pinned servers back to back: each
// must be seen pinned from its first reading on (a reading taken between
// fork and exec would show this process's affinity instead).
func TestProcessDriverPinsEveryChild(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	cpus := rig.ReadTopology("/sys", 2).Nodes[0]
	if len(cpus) < 2 {
		t.Skipf("one CPU: nothing to pin apart")
	}
	want := strconv.Itoa(cpus[len(cpus)-1])
	d := process.NewDriver(bin, nil)
	t.Cleanup(func() { d.Close(context.Background()) })
	for i := range 15 {
		srv, err := d.StartServer(t.Context(), rig.ServerSpec{Name: "pin", CPUs: want, Mems: "0",
			Args:    []string{"server", "--port", strconv.Itoa(testenv.FreePort(t)), "--bind", "127.0.0.1"},
			LogPath: filepath.Join(base, fmt.Sprintf("server-%d.log", i))})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		pl := srv.Placement()
		if pl.CPUs != want || pl.Policy != "bind:0" {
			t.Errorf("start %d: placement %+v, want cpus %s bound to node 0", i, pl, want)
		}
		srv.Stop(t.Context())
	}
	assertNoProcesses(t, bin)
}
