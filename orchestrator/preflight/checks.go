package preflight

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/results"
)

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

// ownServerCheck says the check name concerns tierbench's own server
// only: its O_DIRECT, libaio, io_uring, aio budget or disk space.
func ownServerCheck(name string) bool {
	n := strings.ToLower(name)
	for _, own := range []string{"direct", "uring", "libaio", "aio-max", "disk"} {
		if strings.Contains(n, own) {
			return true
		}
	}
	return false
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

// errUringRefused marks io_uring refused where the server runs: --force
// does not override it, as the row could not run at all.
var errUringRefused = errors.New("preflight: io_uring cannot be set up where the server runs")

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
