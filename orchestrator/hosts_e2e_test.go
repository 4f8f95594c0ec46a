package orchestrator

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fleet"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// hostArgs is tinyArgs for one libaio row across the test hosts.
func hostArgs(t *testing.T, server *testenv.Host, clients []*testenv.Host, threads string, cellSeconds string) (args []string, data, out string) {
	base := testenv.MustDiskDir(t)
	data, out = filepath.Join(base, "data"), filepath.Join(base, "out")
	args = tinyArgs(t, data, out)
	var eps []string
	for _, c := range clients {
		eps = append(eps, c.Name+"="+c.Socket)
	}
	args = append(args, "--backends", "libaio", "--threads", threads, "--cell-seconds", cellSeconds,
		"--server-host", server.Name+"="+server.Socket, "--client-hosts", strings.Join(eps, ","))
	return args, data, out
}

// watchContainers calls f with each new container of role (any role:
// "") on an engine until ctx ends.
func watchContainers(ctx context.Context, cli *client.Client, role string, f func(id string, name string, args []string)) {
	seen := map[string]bool{}
	label := docker.LabelRole + "=" + role
	if role == "" {
		label = docker.LabelRole
	}
	for ctx.Err() == nil {
		list, _ := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", label)})
		for _, c := range list.Items {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			if in, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{}); err == nil {
				f(c.ID, docker.FirstName(c.Names), in.Container.Args)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRunAcrossHosts: the server on engine A, the clients on B and on A
// (two client hosts). The table comes out; the bundle holds both hosts'
// fingerprints and preflights, their network checks and every client's
// JSON; each cell's ops are the sum of the clients' ops in the shared
// window and the merged latency histogram counts every client's ops,
// after the same unrecorded warm-up as the single-host steps; the
// per-run password reaches no file of the bundle; no container is left.
func TestRunAcrossHosts(t *testing.T) {
	bin := testenv.MustBinary(t)
	hosts := testenv.MustHosts(t, 2, testenv.HostsOptions{})
	a, b := hosts[0], hosts[1]
	args, data, out := hostArgs(t, a, []*testenv.Host{b, a}, "3,4", "1")

	// The password is in a file in each container, never on a command
	// line: read it from the server container's file, and keep every
	// container's inspect document and every command line on this machine
	// (the hosts' containers run on its kernel) to search for it.
	// The veth between the hosts is captured on host b's side (its
	// clients' traffic to the server on a): neither the password nor a
	// key may cross it in clear.
	capt := startCapture(t, b.NetNSPath())
	ctx, stop := context.WithCancel(t.Context())
	var mu sync.Mutex
	var passwords, seen []string
	for _, h := range hosts {
		cli := h.Client(t)
		go watchContainers(ctx, cli, "", func(id, name string, _ []string) {
			res, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
			in := res.Container
			doc, _ := json.Marshal(in)
			var pw string
			if err == nil && in.Config != nil && in.Config.Labels[docker.LabelRole] == "server" {
				pw = readContainerFile(ctx, cli, id, rig.ContainerPasswordFile)
				capt.watch([]byte(strings.TrimSpace(pw)), []byte("PRIVATE KEY"))
				for _, f := range []string{rig.TLSServerKeyFile, rig.TLSClientKeyFile} {
					capt.watch(keySecrets(readContainerFile(ctx, cli, id, rig.ContainerTLSDir+"/"+f))...)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "docker inspect "+name+": "+string(doc))
			if pw != "" {
				passwords = append(passwords, pw)
			}
		})
	}
	go func() {
		for ctx.Err() == nil {
			cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, f := range cmdlines {
				if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte("tierbench")) {
					mu.Lock()
					seen = append(seen, f+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
					mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	// A second run on the same data dir of host a, started once the first
	// holds it, is refused naming the first and touches nothing.
	second := make(chan result, 1)
	go func() {
		marker := filepath.Join(data, safe.DataMarker)
		for {
			if ctx.Err() != nil {
				second <- result{code: -1, stderr: "the first run never marked " + marker}
				return
			}
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		again := slices.Clone(args)
		again[slices.Index(again, "--out")+1] = out + "-second"
		again[slices.Index(again, "--state-dir")+1] = filepath.Join(data, "..", "state-second")
		second <- runBinary(t, bin, again...)
	}()
	res := runBinary(t, bin, args...)
	stop()
	found, ports := capt.Stop(t)
	if res.code != 0 {
		logs, _ := filepath.Glob(filepath.Join(out, results.DirLogs, "client-*"))
		var tail []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			tail = append(tail, l+":\n"+rig.Clip(b))
		}
		t.Fatalf("run across hosts: exit %d\n%s\n%s", res.code, res.stderr, strings.Join(tail, "\n"))
	}
	for _, want := range []string{"host a: preflight", "host b: preflight", "host b: link to the server", "host a: link to the server",
		"t=4 pass 1/1 (server on host a, clients b×2 a×2)", "loading 200000 keys of 16+96 B from host b",
		"cleanup: host a: removed the segment files"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, res.stderr)
		}
	}
	plan := checkBundle(t, out, res.stdout, 1, 1)
	select {
	case s := <-second:
		if s.code != ExitUsage || !strings.Contains(s.stderr, "is in use by run "+plan.RunID) || !strings.Contains(s.stderr, "host a") {
			t.Errorf("a second run on host a's data dir: exit %d, want %d naming run %s on host a:\n%s", s.code, ExitUsage, plan.RunID, s.stderr)
		}
		if _, err := os.Stat(out + "-second"); err == nil {
			t.Errorf("the refused run left its bundle %s-second", out)
		}
	case <-time.After(2 * time.Minute):
		t.Errorf("the second run did not end")
	}
	if _, err := os.Stat(filepath.Join(data, safe.DataMarker)); err == nil {
		t.Errorf("the run left its marker in host a's data dir")
	}
	if plan.Hosts == nil || plan.Hosts.Bind != a.Addr || !plan.Hosts.Auth {
		t.Fatalf("plan hosts: got %+v, want the server bound to %s with a password", plan.Hosts, a.Addr)
	}
	// TLS by default beyond loopback: the row says so, the CA is in the
	// bundle, and the veth carried the clients' traffic but no secret.
	if len(plan.Rows) != 1 || !plan.Rows[0].TLS || !strings.Contains(res.stderr, "tls: on (across hosts beyond loopback") {
		t.Errorf("rows %+v: want the one row over TLS, said so:\n%s", plan.Rows, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, results.FileTLSCA)); err != nil {
		t.Errorf("the run's CA is not in the bundle: %v", err)
	}
	veth := ports[uint16(plan.Hosts.Port)]
	if len(found) != 0 || veth < 1<<20 {
		t.Errorf("capture on host b: got %d payload bytes of the server's port %d and these in clear: %q; want over 1 MiB and none", veth, plan.Hosts.Port, found)
	}
	for _, h := range []string{"a", "b"} {
		for _, f := range []string{results.FilePreflight, results.FileFingerprint, results.FileNetwork} {
			if st, err := os.Stat(filepath.Join(out, results.DirHosts, h, f)); err != nil || st.Size() < 10 {
				t.Errorf("hosts/%s/%s: %v, want it", h, f, err)
			}
		}
	}

	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	for _, want := range []string{"Across 2 hosts", "- **a** (server and client, unix://", "- **b** (client, unix://", "Link to the server: PING round trip"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	passes, _, err := results.ReadCells(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range passes {
		checkHostsPass(t, out, p)
	}

	f, err := os.Open(filepath.Join(out, results.DirHosts, results.FileHostsLatency))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatalf("no latency record")
	}
	var lat results.HostsLatencyRecord
	if err := json.Unmarshal(sc.Bytes(), &lat); err != nil {
		t.Fatal(err)
	}
	if s := lat.HostStealShare; hostCountsSteal() && (s == nil || *s < 0 || *s > 1) {
		t.Errorf("hosts latency: got host steal %v, want the most the client hosts read", s)
	}
	var counts, warmOps int64
	for _, c := range lat.Clients {
		var rep fleet.Report
		results.ReadJSON(out, c.JSON, &rep)
		h, err := hdrhistogram.Decode([]byte(rep.Online.Histogram))
		if err != nil {
			t.Fatalf("%s: %v", c.JSON, err)
		}
		counts += h.TotalCount()
		// The warm-up the single-host steps have, run before the shared
		// window, which stays the cell's 1 s.
		w := rep.Online.Warmup
		if w.Seconds != results.LatencyWarmupSeconds || w.Ops == 0 || rep.Online.Window == nil || rep.Online.Window.Seconds != 1 {
			t.Errorf("%s: got a %v s warm-up of %d ops and window %+v, want a %d s warm-up with ops before a 1 s window", c.JSON, w.Seconds, w.Ops, rep.Online.Window, results.LatencyWarmupSeconds)
		}
		warmOps += w.Ops
	}
	if len(lat.Clients) != 2 || lat.Count == 0 || lat.Count != counts || lat.P99us < lat.P50us {
		t.Errorf("latency: merged count %d of %d clients, their histograms count %d; p50 %v p99 %v: want the merge of both", lat.Count, len(lat.Clients), counts, lat.P50us, lat.P99us)
	}
	if lat.WarmupSeconds != results.LatencyWarmupSeconds || lat.WarmupOps != warmOps {
		t.Errorf("latency record: got a %v s warm-up of %d ops, want %d s and the clients' %d", lat.WarmupSeconds, lat.WarmupOps, results.LatencyWarmupSeconds, warmOps)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(passwords) == 0 {
		t.Fatalf("no server container with a password file seen on host a")
	}
	for _, pw := range passwords {
		for _, s := range seen {
			if strings.Contains(s, pw) {
				t.Errorf("the run's password is in %.200s", s)
			}
		}
	}
	if !slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, "--auth-file "+rig.ContainerPasswordFile) }) {
		t.Errorf("no command line seen with --auth-file %s: the search for the password saw nothing", rig.ContainerPasswordFile)
	}
	filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), "PRIVATE KEY") {
			t.Errorf("%s holds a private key", path)
		}
		for _, pw := range passwords {
			if strings.Contains(string(data), pw) {
				t.Errorf("%s holds the run's password", path)
			}
		}
		return nil
	})
	for _, h := range hosts {
		if left := labelledContainers(t, h.Client(t)); len(left) != 0 {
			t.Errorf("host %s: containers left: %q", h.Name, left)
		}
	}

	// --resume across hosts: without its last pass and its merged latency
	// phase, the bundle is completed on the same hosts with just those.
	dropLastPass(t, out)
	if err := os.Remove(filepath.Join(out, results.DirHosts, results.FileHostsLatency)); err != nil {
		t.Fatal(err)
	}
	res = resumeBundle(t, bin, out, filepath.Join(data, "..", "state"), "cell 1/1: Libaio", "pass 1/1 (server on host a, clients b×2 a×2)", "latency, 1 s online")
	checkBundle(t, out, res.stdout, 1, 1)
	again, _, err := results.ReadCells(out)
	if err != nil || len(again) != len(passes) {
		t.Fatalf("after resume: %d passes (%v), want %d", len(again), err, len(passes))
	}
	for _, p := range again {
		checkHostsPass(t, out, p)
	}
	if lats, err := results.ReadHostsLatency(out); err != nil || len(lats) != 1 || lats[0].Count == 0 {
		t.Errorf("after resume: hosts latency %+v (%v), want the row's merged phase once", lats, err)
	}
	for _, h := range hosts {
		if left := labelledContainers(t, h.Client(t)); len(left) != 0 {
			t.Errorf("host %s: containers left after resume: %q", h.Name, left)
		}
	}
}

// resumeBundle runs `run --resume out` to a clean end and checks its
// progress lines hold each of wants.
func resumeBundle(t *testing.T, bin, out, stateDir string, wants ...string) result {
	t.Helper()
	res := runBinary(t, bin, "run", "--resume", out, "--state-dir", stateDir)
	if res.code != 0 {
		t.Fatalf("run --resume %s: exit %d\n%s", out, res.code, res.stderr)
	}
	for _, want := range wants {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("resume's progress lacks %q:\n%s", want, res.stderr)
		}
	}
	return res
}

// dropLastPass removes the last pass record from a bundle's cells.jsonl,
// as if the run had been stopped before it: and so before its render,
// which seals the bundle (a sealed bundle whose records changed is
// refused by --resume).
func dropLastPass(t *testing.T, out string) {
	t.Helper()
	if err := os.Remove(filepath.Join(out, results.FileSums)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, results.FileCells)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"kind":"pass"`) {
			lines = append(lines[:i], lines[i+1:]...)
			break
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunAcrossHostsClientKilled: killing host B's client container in the
// middle of a cell fails that cell naming host B, and the run removes
// everything on both engines.
func TestRunAcrossHostsClientKilled(t *testing.T) {
	bin := testenv.MustBinary(t)
	hosts := testenv.MustHosts(t, 2, testenv.HostsOptions{})
	a, b := hosts[0], hosts[1]
	args, _, out := hostArgs(t, a, []*testenv.Host{b}, "2", "4")
	cli := b.Client(t)
	ctx, stop := context.WithCancel(t.Context())
	killed := make(chan string, 1)
	go watchContainers(ctx, cli, "client", func(id, name string, _ []string) {
		if !strings.Contains(name, "-t2-p1-") {
			return
		}
		// Into the window: 2 s of lead, then 4 s of cell.
		time.Sleep(fleet.LeadTime + 1500*time.Millisecond)
		if _, err := cli.ContainerKill(context.Background(), id, client.ContainerKillOptions{Signal: "KILL"}); err == nil {
			killed <- name
		}
	})
	res := runBinary(t, bin, args...)
	stop()
	select {
	case <-killed:
	default:
		t.Fatalf("the client container on host b was never killed; run exit %d\n%s", res.code, res.stderr)
	}
	if res.code != 1 {
		t.Errorf("run with a killed client: exit %d, want 1", res.code)
	}
	for _, want := range []string{"t=2 pass 1", "host b", "exited with status 137"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	fails, err := results.ReadFailures(out)
	if err != nil || len(fails) != 1 || !strings.Contains(fails[0].Error, "host b") {
		t.Errorf("fail records: %+v, %v; want one naming host b", fails, err)
	}
	for _, h := range hosts {
		if left := labelledContainers(t, h.Client(t)); len(left) != 0 {
			t.Errorf("host %s: containers left: %q", h.Name, left)
		}
	}
}

// checkHostsPass checks one pass across hosts b, a: the split of its
// threads, each client's JSON, and that its ops are their sum.
func checkHostsPass(t *testing.T, out string, p results.PassRecord) {
	t.Helper()
	var sum int64
	var threads []int
	for _, c := range p.Clients {
		sum += c.Ops
		threads = append(threads, c.Threads)
		var rep fleet.Report
		results.ReadJSON(out, c.JSON, &rep)
		if len(rep.Cells) != 1 || rep.Cells[0].Ops != c.Ops || rep.Cells[0].Window == nil || rep.Cells[0].Window.Seconds != 1 {
			t.Errorf("client JSON %s: got %+v, want one 1 s window with %d ops", c.JSON, rep.Cells, c.Ops)
		}
	}
	if want := fleet.SplitThreads(p.Threads, 2); !slices.Equal(threads, want) || threads[0]+threads[1] != p.Threads {
		t.Errorf("t=%d over hosts b, a: got threads %v, want %v", p.Threads, threads, want)
	}
	if p.Ops == 0 || p.Ops != sum || p.Seconds != 1 || p.OpsPerSec != float64(sum) {
		t.Errorf("pass: ops %d over %v s at %v ops/s; the clients' ops sum to %d: want the sum over the 1 s window", p.Ops, p.Seconds, p.OpsPerSec, sum)
	}
	if p.ReadBytes <= 0 || p.Server.CPUs == "" {
		t.Errorf("server evidence read on host a: read_bytes %d placement %+v, want device reads and a cpu list", p.ReadBytes, p.Server)
	}
	// The server's CPU, read by hostprobe on host a, user and system apart.
	if p.ServerCPUSeconds <= 0 || p.ServerSystemCPUSeconds <= 0 || p.ServerSystemCPUSeconds > p.ServerCPUSeconds {
		t.Errorf("server CPU read on host a: %.2f s, %.2f s of it system (%s); want both, the system part within the whole", p.ServerCPUSeconds, p.ServerSystemCPUSeconds, p.CPUNote)
	}
}

// readContainerFile reads one file of a container through the engine's
// API; "" when it cannot.
func readContainerFile(ctx context.Context, cli *client.Client, id, path string) string {
	res, err := cli.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		return ""
	}
	rc := res.Content
	defer rc.Close()
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		return ""
	}
	b, _ := io.ReadAll(tr)
	return strings.TrimSpace(string(b))
}
