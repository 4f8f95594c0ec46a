package preflight

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

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// Local runs the host's preflight with the fio baseline once per run
// and keeps its JSON; a failed check stops the run unless --force. A
// bundle that holds it already (Measured) is not measured again.
func Local(ctx context.Context, env Env) error {
	if env.Measured {
		return nil
	}
	dataDir := env.dir()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("preflight: data dir: %w", err)
	}
	env.Printf("preflight: %s (fio baseline: %v)\n", dataDir, env.FioPlanned)
	out, err := process.RunPreflight(ctx, env.Config.Binary, dataDir, env.args(env.FioPlanned), env.Stderr)
	var p results.Preflight
	if err == nil {
		p, err = results.ParsePreflight(out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return err // stopped, not failed: --force would not help
		}
		if !env.forced("preflight: " + err.Error()) {
			return fmt.Errorf("%w (--force measures without a preflight)", err)
		}
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return errors.Join(results.WriteFile(env.Bundle, results.FilePreflight, b), results.WriteFile(env.Bundle, results.FileFingerprint, []byte("null\n")))
	}
	if err := results.WriteFile(env.Bundle, results.FilePreflight, out); err != nil {
		return err
	}
	fp := p.Fingerprint
	if len(fp) == 0 {
		fp = json.RawMessage("null")
	}
	if err := results.WriteFile(env.Bundle, results.FileFingerprint, append(fp, '\n')); err != nil {
		return err
	}
	return env.judge(hostSide(env.Started, p), "host")
}

// forced is the one place that decides what a failed preflight does:
// with --force the run measures anyway, and says so after said (what
// failed); without, the caller refuses.
func (e Env) forced(said string) bool {
	if !e.Config.Force {
		return false
	}
	e.Printf("%s; measuring anyway (--force)\n", said)
	return true
}

// judge says p's warnings and, unless --force, fails on its failed
// checks; where names where p ran.
func (e Env) judge(p results.Preflight, where string) error {
	for _, c := range p.Checks {
		if c.Status == "warn" {
			e.Printf("preflight (%s): WARN %s: %s\n", where, c.Name, c.Detail)
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
	if e.forced(fmt.Sprintf("preflight (%s): FAIL %s", where, strings.Join(msgs, "; "))) {
		return nil
	}
	return fmt.Errorf("%w (%s): %s (--force measures anyway)", fault.ErrPreflight, where, strings.Join(msgs, "; "))
}

// Server runs the preflight where row's server srv runs, on its data dir
// dataDir: for uring it proves io_uring can be set up there (Docker's
// seccomp profile would refuse it) and says so in tgt.UringProbe. Unless
// --force, a failed check fails the row.
func Server(ctx context.Context, env Env, row results.Row, srv rig.ServerHandle, dataDir string, tgt *target.Server) error {
	out, err := env.whereServed(ctx, row, srv, dataDir)
	var p results.Preflight
	if err == nil {
		p, err = results.ParsePreflight(out)
	}
	if err == nil {
		err = env.judge(serverSide(p), env.Driver.Name()+" "+row.Backend)
	}
	if err == nil && row.Backend == "uring" {
		err = uringUsable(p)
		tgt.UringProbe = fmt.Sprintf("%s (%s)", uringDetail(p), env.Driver.Name())
	}
	if err != nil {
		if !errors.Is(err, errUringRefused) && env.forced(fmt.Sprintf("preflight (%s): %v", row.Backend, err)) {
			return nil
		}
		return fmt.Errorf("preflight: %s %s: %w", row.Backend, row.Label, err)
	}
	return nil
}

// AcrossHosts runs `tierbench preflight --json` in a container on every
// host and keeps each under hosts/<name>/; the server host's is also the
// bundle's preflight.json and fingerprint.json, and judged. The image has
// no fio, so there is no fio baseline on a remote host.
func AcrossHosts(ctx context.Context, env Env, h *docker.HostsDriver) error {
	if env.Measured {
		return nil
	}
	if !env.Config.NoFio {
		env.Printf("preflight: no fio baseline across hosts (the image holds tierbench alone): the report has no ceiling\n")
	}
	for _, d := range h.Engines {
		role := "client"
		args := append([]string{"preflight", "--json", "--data-dir", rig.ContainerDataDir}, env.args(false)...)
		var binds []string
		if d == h.Server {
			role = "server"
			binds = []string{env.Config.DataDir + ":" + rig.ContainerDataDir}
		}
		dir := filepath.Join(env.Bundle, results.DirHosts, d.Endpoint.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("preflight: bundle: %w", err)
		}
		env.Printf("host %s: preflight (%s host, %s)\n", d.Endpoint.Name, role, d.Endpoint.Display())
		out, status, err := d.RunOnce(ctx, "preflight", "preflight", args, role == "server", binds,
			filepath.Join(env.Bundle, results.DirLogs, "preflight-"+d.Endpoint.Name+".log"))
		if err == nil && status != 0 && status != 1 {
			err = fmt.Errorf("exited %d: %s", status, rig.Clip(out))
		}
		var p results.Preflight
		if err == nil {
			p, err = results.ParsePreflight(out)
		}
		if err != nil {
			err = fmt.Errorf("preflight: host %s: %w", d.Endpoint.Name, err)
			if ctx.Err() != nil {
				return err // stopped, not failed: --force would not help
			}
			if !env.forced(err.Error()) {
				return fmt.Errorf("%w (--force measures without a preflight)", err)
			}
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
		if err := errors.Join(results.WriteFile(env.Bundle, results.FilePreflight, out), results.WriteFile(env.Bundle, results.FileFingerprint, append(fp, '\n'))); err != nil {
			return err
		}
		if err := env.judge(p, "host "+d.Endpoint.Name); err != nil {
			return err
		}
	}
	return nil
}

// Network measures each client host's link to the row's server
// once per run: round trips of PING at depth 1 and the rate of pipelined
// PINGs, the most this link can carry whatever the server's storage.
func Network(ctx context.Context, env Env, h *docker.HostsDriver, tgt target.Server) error {
	const noopThreads, noopBatch = 4, 1024
	for i, d := range h.Clients {
		if slices.Contains(h.Clients[:i], d) {
			continue
		}
		nc := results.NetworkCheck{Host: d.Endpoint.Name, NoopThread: noopThreads, NoopBatch: noopBatch}
		base := env.BenchArgs(tgt)
		rtt, _, err := env.Driver.RunClient(ctx, rig.ClientSpec{Name: "net-rtt-" + d.Endpoint.Name, Host: i, LogPath: filepath.Join(env.Bundle, results.DirLogs, "net-rtt-"+d.Endpoint.Name+".log"),
			Args: append(base, "-s", "--online", "--op-workload", "PING", "--op-percent", "100", "-t", "1", "--itp", "1", "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("preflight: network: %w", err)
		}
		var on struct {
			Online *struct {
				Latency struct{ P50, P99 float64 } `json:"latency_us"`
			} `json:"online"`
		}
		if doc, err := rig.JSONDocument(rtt); err != nil || json.Unmarshal(doc, &on) != nil || on.Online == nil {
			return fmt.Errorf("preflight: network: host %s: no online report: %q", d.Endpoint.Name, rig.Clip(rtt))
		}
		nc.RTTp50us, nc.RTTp99us = on.Online.Latency.P50, on.Online.Latency.P99
		noop, _, err := env.Driver.RunClient(ctx, rig.ClientSpec{Name: "net-noop-" + d.Endpoint.Name, Host: i, LogPath: filepath.Join(env.Bundle, results.DirLogs, "net-noop-"+d.Endpoint.Name+".log"),
			Args: append(base, "-s", "--op", "PING", "-t", strconv.Itoa(noopThreads), "-b", strconv.Itoa(noopBatch), "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("preflight: network: %w", err)
		}
		b, err := rig.ParseBench(noop)
		if err != nil || len(b.Cells) != 1 {
			return fmt.Errorf("preflight: network: host %s: %v %q", d.Endpoint.Name, err, rig.Clip(noop))
		}
		nc.NoopOps = b.Cells[0].OpsPerSec
		env.Printf("host %s: link to the server: PING round trip p50 %.0f µs p99 %.0f µs; pipelined PING %s ops/s\n", d.Endpoint.Name, nc.RTTp50us, nc.RTTp99us, human.Ops(nc.NoopOps))
		if err := results.WriteJSON(filepath.Join(env.Bundle, results.DirHosts, d.Endpoint.Name), results.FileNetwork, nc); err != nil {
			return err
		}
	}
	return nil
}

// whereServed runs the preflight where the row's server runs: in
// its container, which holds tierbench when it is tierbench's own image;
// for an image of another server, which has no tierbench to run, here on
// the host beside the container (foreign servers run on this machine
// only), on the same data dir.
func (e Env) whereServed(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string) ([]byte, error) {
	if e.Foreign(row) && e.Driver.Capabilities().Images {
		return process.RunPreflight(ctx, e.Config.Binary, dataDir, e.args(false), io.Discard)
	}
	return e.Driver.PreflightAt(ctx, srv, e.Driver.DataPath(dataDir), e.args(false))
}
