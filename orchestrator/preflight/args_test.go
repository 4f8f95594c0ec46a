package preflight

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// flagValue is the value after flag in args, and whether flag is there.
func flagValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", i >= 0
	}
	return args[i+1], true
}

// TestArgs: preflight is told the run's plan; the server's memory and
// index only when the run starts its servers; fio's flags only with the
// baseline, a pinned sweep only with a pinned row, bound to a memory
// node only where there are two.
func TestArgs(t *testing.T) {
	cfg := plan.Config{Workload: results.Workload{
		DBSize:      3_000_000,
		KeyLength:   16,
		ValueLength: 100,
		Threads:     []int{4, 16},
		Memory:      "1G",
		Index:       "64M",
	},
	}
	pinned := cfg
	pinned.Pins = []string{plan.PinNone, plan.PinPinned}
	pin := rig.Pinning{ServerCPUs: "0", ServerMems: "1"}
	tests := []struct {
		name  string
		env   Env
		fio   bool
		want  map[string]string // flag → value ("" for a flag alone)
		never []string
	}{
		{"own servers, no fio", Env{Config: cfg, Started: true}, false,
			map[string]string{"--dbsize": "3000000", "--threads": "4,16", "--memory": "1G", "--index": "64M"},
			[]string{"--fio", "--fio-cpus"}},
		{"external server", Env{Config: cfg}, false,
			map[string]string{"--dbsize": "3000000"}, []string{"--memory", "--index", "--fio"}},
		{"fio, no pinned row", Env{Config: cfg, Started: true, Pinning: pin, NUMANodes: 2}, true,
			map[string]string{"--fio-files": "8"}, []string{"--fio-cpus", "--fio-mems", "--fio-full-sweep"}},
		{"fio, a pinned row, one node", Env{Config: pinned, Started: true, Pinning: pin, NUMANodes: 1}, true,
			map[string]string{"--fio-cpus": "0"}, []string{"--fio-mems"}},
		{"fio, a pinned row, two nodes", Env{Config: pinned, Started: true, Pinning: pin, NUMANodes: 2}, true,
			map[string]string{"--fio-cpus": "0", "--fio-mems": "1"}, nil},
	}
	for _, tt := range tests {
		args := tt.env.args(tt.fio)
		if got, _ := flagValue(args, "--record-bytes"); got != strconv.Itoa(results.RecordBytes(16, 100)) {
			t.Errorf("%s: --record-bytes got %q, want %d", tt.name, got, results.RecordBytes(16, 100))
		}
		for flag, want := range tt.want {
			if got, ok := flagValue(args, flag); !ok || got != want {
				t.Errorf("%s: %s got %q (present %v), want %q in %v", tt.name, flag, got, ok, want, args)
			}
		}
		for _, flag := range tt.never {
			if slices.Contains(args, flag) {
				t.Errorf("%s: got %s in %v, want none", tt.name, flag, args)
			}
		}
		if !tt.fio {
			continue
		}
		// The 8 files hold the dataset, each a whole MiB, none larger
		// than needed.
		v, _ := flagValue(args, "--fio-size")
		per, err := strconv.ParseInt(v, 10, 64)
		total := tt.env.Config.Record().DatasetBytes()
		if err != nil || per < 1<<20 || per%(1<<20) != 0 || fioFiles*per < total || fioFiles*(per-1<<20) >= total {
			t.Errorf("%s: --fio-size got %q, want whole MiB files, %d of them just holding %d B", tt.name, v, fioFiles, total)
		}
	}
}

// TestHostSide: for a server the run does not start, a failed check of
// tierbench's own server is a warning; the host's own failures stay.
func TestHostSide(t *testing.T) {
	p := results.Preflight{Checks: []results.PreflightCheck{
		{Name: "odirect", Status: "fail", Detail: "no O_DIRECT"},
		{Name: "io_uring", Status: "fail", Detail: "disabled"},
		{Name: "fio", Status: "fail", Detail: "not found"},
		{Name: "numa", Status: "pass"},
	}}
	for _, tt := range []struct {
		started bool
		want    []string
	}{
		{true, []string{"fail", "fail", "fail", "pass"}},
		{false, []string{"warn", "warn", "fail", "pass"}},
	} {
		got := hostSide(tt.started, p)
		var status []string
		for _, c := range got.Checks {
			status = append(status, c.Status)
		}
		if !slices.Equal(status, tt.want) {
			t.Errorf("started %v: got %v, want %v", tt.started, status, tt.want)
		}
		if !tt.started && !strings.Contains(got.Checks[0].Detail, "not the server at --server-addr") {
			t.Errorf("started %v: detail %q does not say why it is a warning", tt.started, got.Checks[0].Detail)
		}
	}
	if p.Checks[0].Status != "fail" {
		t.Errorf("hostSide changed its argument's checks: got %q, want fail", p.Checks[0].Status)
	}
}

// TestSweepsAsAsked: the sweeps the estimate counts are the ones args
// asks preflight for: one with --fio, a second with --fio-cpus, every
// depth with --fio-full-sweep, as deep as --fio-max-depth.
func TestSweepsAsAsked(t *testing.T) {
	quick := plan.Config{Workload: results.Workload{
		Profile:     plan.ProfileQuick,
		DBSize:      1000,
		KeyLength:   16,
		ValueLength: 96,
		Threads:     []int{8},
		Pins:        []string{plan.PinNone},
	},
	}
	pinned := quick
	pinned.Pins = []string{plan.PinPinned, plan.PinNone}
	reference := quick
	reference.Profile = plan.ProfileReference
	noFio := quick
	noFio.NoFio = true
	pin := rig.Pinning{ServerCPUs: "0-1"}
	for _, tt := range []struct {
		name     string
		env      Env
		wantCPUs []int
	}{
		{"quick, unpinned", Env{Config: quick, FioPlanned: plan.FioPlanned(quick), Started: true, Pinning: pin}, []int{4}},
		{"quick, a pinned row", Env{Config: pinned, FioPlanned: plan.FioPlanned(pinned), Started: true, Pinning: pin}, []int{4, 2}},
		{"reference", Env{Config: reference, FioPlanned: plan.FioPlanned(reference), Started: true, Pinning: pin}, []int{4}},
		{"no fio", Env{Config: noFio, FioPlanned: plan.FioPlanned(noFio), Started: true, Pinning: pin}, nil},
	} {
		cpus, depth, full := tt.env.Sweeps(4)
		if !slices.Equal(cpus, tt.wantCPUs) {
			t.Errorf("%s: got sweeps on %v CPUs, want %v", tt.name, cpus, tt.wantCPUs)
		}
		args := tt.env.args(tt.env.FioPlanned)
		d, _ := flagValue(args, "--fio-max-depth")
		if slices.Contains(args, "--fio") != (len(cpus) > 0) || slices.Contains(args, "--fio-cpus") != (len(cpus) == 2) ||
			slices.Contains(args, "--fio-full-sweep") != full || len(cpus) > 0 && d != strconv.Itoa(depth) {
			t.Errorf("%s: preflight is asked %q; the estimate counts %v CPUs, depth %d, full %v", tt.name, args, cpus, depth, full)
		}
	}
}
