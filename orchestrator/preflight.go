package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The preflights of a run: the host's, once per run with the fio
// baseline, and each row server's own checks (O_DIRECT, libaio, io_uring),
// run where that server runs.

// errPreflight marks a failed preflight: it stops the run.
var errPreflight = errors.New("orchestrator: preflight failed")

// preflight runs the host's preflight with the fio baseline once per run
// and keeps its JSON; a failed check stops the run unless --force.
func (r *runner) preflight(ctx context.Context) error {
	if r.hosts != nil {
		return r.preflightHosts(ctx)
	}
	if _, err := os.Stat(filepath.Join(r.out, filePreflight)); err == nil && r.cfg.Resume != "" {
		return nil // measured when the run began
	}
	dataDir := r.preflightDir()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("orchestrator: data dir: %w", err)
	}
	r.printf("preflight: %s (fio baseline: %v)\n", dataDir, r.fioPlanned())
	out, err := runPreflight(ctx, r.cfg.Binary, dataDir, r.preflightArgs(r.fioPlanned()))
	var p preflightOutput
	if err == nil {
		p, err = parsePreflight(out)
	}
	if err != nil {
		if !r.cfg.Force {
			return fmt.Errorf("%w (--force measures without a preflight)", err)
		}
		r.printf("preflight: %v; measuring anyway (--force)\n", err)
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return errors.Join(writeFile(r.out, filePreflight, b), writeFile(r.out, fileFingerprint, []byte("null\n")))
	}
	if err := writeFile(r.out, filePreflight, out); err != nil {
		return err
	}
	fp := p.Fingerprint
	if len(fp) == 0 {
		fp = json.RawMessage("null")
	}
	if err := writeFile(r.out, fileFingerprint, append(fp, '\n')); err != nil {
		return err
	}
	return r.judgePreflight(hostSide(r.cfg, p), "host")
}

// preflightArgs tells preflight what the run plans, so its disk, memory
// and aio-budget checks judge this run and not the reference's defaults.
func (r *runner) preflightArgs(fio bool) []string {
	threads := make([]string, len(r.cfg.Threads))
	for i, t := range r.cfg.Threads {
		threads[i] = strconv.Itoa(t)
	}
	args := []string{"--dbsize", strconv.FormatInt(r.cfg.DBSize, 10),
		"--threads", strings.Join(threads, ","), "--record-bytes", strconv.Itoa(recordBytes(r.cfg.KeyLength, r.cfg.ValueLength))}
	if r.cfg.ServerAddr == "" {
		args = append(args, "--memory", r.cfg.Memory, "--index", r.cfg.Index)
	}
	if fio {
		args = append(args, r.fioArgs()...)
	}
	return args
}

func (r *runner) judgePreflight(p preflightOutput, where string) error {
	for _, c := range p.Checks {
		if c.Status == "warn" {
			r.printf("preflight (%s): WARN %s: %s\n", where, c.Name, c.Detail)
		}
	}
	failed := p.failed()
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
	return fmt.Errorf("%w (%s): %s (--force measures anyway)", errPreflight, where, strings.Join(msgs, "; "))
}

// serverPreflight runs the preflight where the server runs: for uring it
// proves io_uring can be set up there (Docker's seccomp profile would
// refuse it). Unless --force, a failed check fails the row.
func (r *runner) serverPreflight(ctx context.Context, row Row, srv serverHandle, dataDir string, tgt *rowTarget) error {
	out, err := r.drv.preflightAt(ctx, srv, r.drv.dataPath(dataDir), r.preflightArgs(false))
	var p preflightOutput
	if err == nil {
		p, err = parsePreflight(out)
	}
	if err == nil {
		err = r.judgePreflight(serverSide(p), r.drv.name()+" "+row.Backend)
	}
	if err == nil && row.Backend == "uring" {
		err = uringUsable(p)
		tgt.uringProbe = fmt.Sprintf("%s (%s)", uringDetail(p), r.drv.name())
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
func serverSide(p preflightOutput) preflightOutput {
	var keep []preflightCheck
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
func uringUsable(p preflightOutput) error {
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
func uringDetail(p preflightOutput) string {
	for _, c := range p.Checks {
		if strings.Contains(strings.ToLower(c.Name), "uring") {
			return fmt.Sprintf("%s %s: %s", c.Name, c.Status, c.Detail)
		}
	}
	return "no io_uring check"
}
