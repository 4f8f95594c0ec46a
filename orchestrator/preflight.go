package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// The preflights of a run: the host's, once per run with the fio
// baseline (across hosts, every host's in a container there, and each
// client host's link to the server), and each row server's own checks
// (O_DIRECT, libaio, io_uring), run where that server runs.

// preflightLocal runs the host's preflight with the fio baseline once per run
// and keeps its JSON; a failed check stops the run unless --force.
func (r *runner) preflightLocal(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(r.out, results.FilePreflight)); err == nil && r.cfg.Resume != "" {
		return nil // measured when the run began
	}
	dataDir := r.preflightDir()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("orchestrator: data dir: %w", err)
	}
	r.printf("preflight: %s (fio baseline: %v)\n", dataDir, r.fioPlanned())
	out, err := process.RunPreflight(ctx, r.cfg.Binary, dataDir, r.preflightArgs(r.fioPlanned()), r.stderr)
	var p results.Preflight
	if err == nil {
		p, err = results.ParsePreflight(out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return err // stopped, not failed: --force would not help
		}
		if !r.cfg.Force {
			return fmt.Errorf("%w (--force measures without a preflight)", err)
		}
		r.printf("preflight: %v; measuring anyway (--force)\n", err)
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return errors.Join(results.WriteFile(r.out, results.FilePreflight, b), results.WriteFile(r.out, results.FileFingerprint, []byte("null\n")))
	}
	if err := results.WriteFile(r.out, results.FilePreflight, out); err != nil {
		return err
	}
	fp := p.Fingerprint
	if len(fp) == 0 {
		fp = json.RawMessage("null")
	}
	if err := results.WriteFile(r.out, results.FileFingerprint, append(fp, '\n')); err != nil {
		return err
	}
	return r.judgePreflight(hostSide(r.targets.Started(), p), "host")
}

// preflightArgs tells preflight what the run plans, so its disk, memory
// and aio-budget checks judge this run and not the reference's defaults.
func (r *runner) preflightArgs(fio bool) []string {
	threads := make([]string, len(r.cfg.Threads))
	for i, t := range r.cfg.Threads {
		threads[i] = strconv.Itoa(t)
	}
	args := []string{"--dbsize", strconv.FormatInt(r.cfg.DBSize, 10),
		"--threads", strings.Join(threads, ","), "--record-bytes", strconv.Itoa(results.RecordBytes(r.cfg.KeyLength, r.cfg.ValueLength))}
	if r.targets.Started() {
		args = append(args, "--memory", r.cfg.LargestMemory(), "--index", r.cfg.Index)
	}
	if fio {
		args = append(args, r.fioArgs()...)
		args = append(args, r.pinnedFioArgs()...)
	}
	return args
}

func (r *runner) judgePreflight(p results.Preflight, where string) error {
	for _, c := range p.Checks {
		if c.Status == "warn" {
			r.printf("preflight (%s): WARN %s: %s\n", where, c.Name, c.Detail)
		}
	}
	failed := p.Failed()
	if len(failed) == 0 {
		return nil
	}
	var msgs []string
	for _, c := range failed {
		msgs = append(msgs, c.Name+": "+c.Detail)
	}
	if r.cfg.Force {
		r.printf("preflight (%s): FAIL %s; measuring anyway (--force)\n", where, strings.Join(msgs, "; "))
		return nil
	}
	return fmt.Errorf("%w (%s): %s (--force measures anyway)", fault.ErrPreflight, where, strings.Join(msgs, "; "))
}

// serverPreflight runs the preflight where the server runs: for uring it
// proves io_uring can be set up there (Docker's seccomp profile would
// refuse it). Unless --force, a failed check fails the row.
func (r *runner) serverPreflight(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string, tgt *target.Server) error {
	out, err := r.preflightWhereServed(ctx, row, srv, dataDir)
	var p results.Preflight
	if err == nil {
		p, err = results.ParsePreflight(out)
	}
	if err == nil {
		err = r.judgePreflight(serverSide(p), r.drv.Name()+" "+row.Backend)
	}
	if err == nil && row.Backend == "uring" {
		err = uringUsable(p)
		tgt.UringProbe = fmt.Sprintf("%s (%s)", uringDetail(p), r.drv.Name())
	}
	if err != nil {
		if r.cfg.Force && !errors.Is(err, errUringRefused) {
			r.printf("preflight (%s): %v; measuring anyway (--force)\n", row.Backend, err)
			return nil
		}
		return fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, err)
	}
	return nil
}

// serverSide keeps the checks that concern the server's own process —
// O_DIRECT, libaio and io_uring — from a preflight run where it runs;
// host-level checks (fio, Docker, NUMA, the aio budget) were judged once
// on the host before any server ran: run beside the server, the aio
// budget check would count the server's own contexts against it.
func serverSide(p results.Preflight) results.Preflight {
	var keep []results.PreflightCheck
	for _, c := range p.Checks {
		n := strings.ToLower(c.Name)
		if strings.Contains(n, "uring") || strings.Contains(n, "direct") || strings.Contains(n, "libaio") {
			keep = append(keep, c)
		}
	}
	p.Checks = keep
	return p
}

var errUringRefused = errors.New("orchestrator: io_uring cannot be set up where the server runs")

// uringUsable looks for preflight's io_uring check and requires it to pass.
func uringUsable(p results.Preflight) error {
	for _, c := range p.Checks {
		name := strings.ToLower(c.Name)
		if strings.Contains(name, "uring") {
			if c.Status == "fail" {
				return fmt.Errorf("%w: %s: %s", errUringRefused, c.Name, c.Detail)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: preflight reported no io_uring check", errUringRefused)
}

// uringDetail quotes preflight's io_uring check.
func uringDetail(p results.Preflight) string {
	for _, c := range p.Checks {
		if strings.Contains(strings.ToLower(c.Name), "uring") {
			return fmt.Sprintf("%s %s: %s", c.Name, c.Status, c.Detail)
		}
	}
	return "no io_uring check"
}

// preflightHosts runs `tierbench preflight --json` in a container on every
// host and keeps each under hosts/<name>/; the server host's is also the
// bundle's preflight.json and fingerprint.json, and judged. The image has
// no fio, so there is no fio baseline on a remote host.
func (r *runner) preflightHosts(ctx context.Context, h *docker.HostsDriver) error {
	if _, err := os.Stat(filepath.Join(r.out, results.FilePreflight)); err == nil && r.cfg.Resume != "" {
		return nil
	}
	if !r.cfg.NoFio {
		r.printf("preflight: no fio baseline across hosts (the image holds tierbench alone): the report has no ceiling\n")
	}
	for _, d := range h.Engines {
		role := "client"
		args := append([]string{"preflight", "--json", "--data-dir", rig.ContainerDataDir}, r.preflightArgs(false)...)
		var binds []string
		if d == h.Server {
			role = "server"
			binds = []string{r.cfg.DataDir + ":" + rig.ContainerDataDir}
		}
		dir := filepath.Join(r.out, results.DirHosts, d.Endpoint.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("orchestrator: bundle: %w", err)
		}
		r.printf("host %s: preflight (%s host, %s)\n", d.Endpoint.Name, role, d.Endpoint.Display())
		out, status, err := d.RunOnce(ctx, "preflight", "preflight", args, role == "server", binds,
			filepath.Join(r.out, results.DirLogs, "preflight-"+d.Endpoint.Name+".log"))
		if err == nil && status != 0 && status != 1 {
			err = fmt.Errorf("exited %d: %s", status, rig.Clip(out))
		}
		var p results.Preflight
		if err == nil {
			p, err = results.ParsePreflight(out)
		}
		if err != nil {
			err = fmt.Errorf("orchestrator: host %s: preflight: %w", d.Endpoint.Name, err)
			if ctx.Err() != nil {
				return err // stopped, not failed: --force would not help
			}
			if !r.cfg.Force {
				return fmt.Errorf("%w (--force measures without a preflight)", err)
			}
			r.printf("%v; measuring anyway (--force)\n", err)
			continue
		}
		fp := p.Fingerprint
		if len(fp) == 0 {
			fp = json.RawMessage("null")
		}
		if err := errors.Join(results.WriteFile(dir, results.FilePreflight, out), results.WriteFile(dir, results.FileFingerprint, append(fp, '\n'))); err != nil {
			return err
		}
		if role != "server" {
			continue // a client host's data-dir checks do not concern it
		}
		if err := errors.Join(results.WriteFile(r.out, results.FilePreflight, out), results.WriteFile(r.out, results.FileFingerprint, append(fp, '\n'))); err != nil {
			return err
		}
		if err := r.judgePreflight(p, "host "+d.Endpoint.Name); err != nil {
			return err
		}
	}
	return nil
}

// networkPreflight measures each client host's link to the row's server
// once per run: round trips of PING at depth 1 and the rate of pipelined
// PINGs, the most this link can carry whatever the server's storage.
func (r *runner) networkPreflight(ctx context.Context, h *docker.HostsDriver, tgt target.Server) error {
	const noopThreads, noopBatch = 4, 1024
	for i, d := range h.Clients {
		if slices.Contains(h.Clients[:i], d) {
			continue
		}
		nc := results.NetworkCheck{Host: d.Endpoint.Name, NoopThread: noopThreads, NoopBatch: noopBatch}
		base := r.benchArgs(tgt)
		rtt, _, err := r.drv.RunClient(ctx, rig.ClientSpec{Name: "net-rtt-" + d.Endpoint.Name, Host: i, LogPath: filepath.Join(r.out, results.DirLogs, "net-rtt-"+d.Endpoint.Name+".log"),
			Args: append(base, "-s", "--online", "--op-workload", "PING", "--op-percent", "100", "-t", "1", "--itp", "1", "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("orchestrator: network preflight: %w", err)
		}
		var on struct {
			Online *struct {
				Latency struct{ P50, P99 float64 } `json:"latency_us"`
			} `json:"online"`
		}
		if doc, err := rig.JSONDocument(rtt); err != nil || json.Unmarshal(doc, &on) != nil || on.Online == nil {
			return fmt.Errorf("orchestrator: network preflight: host %s: no online report: %q", d.Endpoint.Name, rig.Clip(rtt))
		}
		nc.RTTp50us, nc.RTTp99us = on.Online.Latency.P50, on.Online.Latency.P99
		noop, _, err := r.drv.RunClient(ctx, rig.ClientSpec{Name: "net-noop-" + d.Endpoint.Name, Host: i, LogPath: filepath.Join(r.out, results.DirLogs, "net-noop-"+d.Endpoint.Name+".log"),
			Args: append(base, "-s", "--op", "PING", "-t", strconv.Itoa(noopThreads), "-b", strconv.Itoa(noopBatch), "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("orchestrator: network preflight: %w", err)
		}
		b, err := rig.ParseBench(noop)
		if err != nil || len(b.Cells) != 1 {
			return fmt.Errorf("orchestrator: network preflight: host %s: %v %q", d.Endpoint.Name, err, rig.Clip(noop))
		}
		nc.NoopOps = b.Cells[0].OpsPerSec
		r.printf("host %s: link to the server: PING round trip p50 %.0f µs p99 %.0f µs; pipelined PING %s ops/s\n", d.Endpoint.Name, nc.RTTp50us, nc.RTTp99us, FormatOps(nc.NoopOps))
		if err := results.WriteJSON(filepath.Join(r.out, results.DirHosts, d.Endpoint.Name), results.FileNetwork, nc); err != nil {
			return err
		}
	}
	return nil
}

// preflightWhereServed runs the preflight where the row's server runs: in
// its container, which holds tierbench when it is tierbench's own image;
// for an image of another server, which has no tierbench to run, here on
// the host beside the container (foreign servers run on this machine
// only), on the same data dir.
func (r *runner) preflightWhereServed(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string) ([]byte, error) {
	if s, err := r.rowServer(row); err == nil && !s.Self && r.drv.Capabilities().Images {
		return process.RunPreflight(ctx, r.cfg.Binary, dataDir, r.preflightArgs(false), io.Discard)
	}
	return r.drv.PreflightAt(ctx, srv, r.drv.DataPath(dataDir), r.preflightArgs(false))
}
