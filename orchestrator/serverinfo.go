package orchestrator

import (
	"strings"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// fioPlanned says whether this run measures the fio baseline.
func (r *runner) fioPlanned() bool { return !r.cfg.NoFio && plan.CeilingApplies(r.cfg) }

// preflightDir is where the host preflight probes: the data dir, or, for
// a server at --server-addr whose data dir was not named, the bundle (the
// run must not create a data dir nobody asked for).
func (r *runner) preflightDir() string {
	if !r.targets.Started() && !r.cfg.Explicit("data") {
		return r.out
	}
	return r.cfg.DataDir
}

// hostSide keeps the preflight checks that can stop this run. For a
// server the run does not start, the checks of tierbench's own server
// (O_DIRECT, libaio, io_uring, the aio budget, disk space for its
// segments) judge nothing that runs: they are kept as warnings.
func hostSide(started bool, p results.Preflight) results.Preflight {
	if started {
		return p
	}
	out := p
	out.Checks = make([]results.PreflightCheck, len(p.Checks))
	for i, c := range p.Checks {
		if c.Status == "fail" && ownServerCheck(c.Name) {
			c.Status = "warn"
			c.Detail += " (tierbench's own server only; not the server at --server-addr)"
		}
		out.Checks[i] = c
	}
	return out
}

func ownServerCheck(name string) bool {
	n := strings.ToLower(name)
	for _, own := range []string{"direct", "uring", "libaio", "aio-max", "disk"} {
		if strings.Contains(n, own) {
			return true
		}
	}
	return false
}
