package orchestrator

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// TestPreflightSweepsAsAsked plans runs on this host and checks that the
// preflight sweeps the estimate counts are the ones the run asks the
// preflight for (its arguments: --fio, --fio-full-sweep, --fio-cpus,
// --fio-max-depth), and that tierbench plan's estimate counts each
// sweep's steps first.
func TestPreflightSweepsAsAsked(t *testing.T) {
	topo := rig.ReadTopology("/sys", runtime.NumCPU())
	var hostCPUs int
	for _, n := range topo.Nodes {
		hostCPUs += len(n)
	}
	var pinnedCPUs int
	if p, err := topo.Pinned(); err == nil {
		cpus, _ := rig.ParseCPUList(p.ServerCPUs)
		pinnedCPUs = len(cpus)
	}
	host := hostcheck.SweepSteps(device.DefaultThrottleLimit, hostCPUs)
	tests := []struct {
		name      string
		cfg       plan.Config
		wantCPUs  []int // the sweeps' CPUs: the host's, then the pinned server's
		wantFull  bool
		wantSteps int
	}{
		{name: "quick, unpinned", cfg: plan.Config{Workload: results.Workload{Profile: plan.ProfileQuick, Pins: []string{plan.PinNone}, Given: []string{"pin"}}},
			wantCPUs: []int{hostCPUs}, wantSteps: host},
		{name: "quick, pinned too", cfg: plan.Config{Workload: results.Workload{Profile: plan.ProfileQuick, Pins: []string{plan.PinPinned, plan.PinNone}, Given: []string{"pin"}}},
			wantCPUs: []int{hostCPUs, pinnedCPUs}, wantSteps: host + hostcheck.SweepSteps(device.DefaultThrottleLimit, pinnedCPUs)},
		{name: "reference, every step", cfg: plan.Config{Workload: results.Workload{Profile: plan.ProfileReference, Pins: []string{plan.PinNone}, Given: []string{"pin"}}},
			wantCPUs: []int{hostCPUs}, wantFull: true, wantSteps: host},
		{name: "no fio", cfg: plan.Config{Workload: results.Workload{
			Profile: plan.ProfileQuick,
			Pins:    []string{plan.PinNone},
			NoFio:   true,
			Given:   []string{"pin"},
		},
		}},
		{name: "a server at an address", cfg: plan.Config{Workload: results.Workload{Profile: plan.ProfileQuick, ServerAddr: "127.0.0.1:6379"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if pinnedCPUs == 0 && slices.Contains(tc.cfg.Pins, plan.PinPinned) {
				t.Fatalf("this host has %d CPUs: the pinned row needs two", hostCPUs)
			}
			tc.cfg.OutDir = t.TempDir()
			r := &runner{local: localMachine{proc: "/proc"}}
			if err := r.setup(tc.cfg); err != nil {
				t.Fatal(err)
			}
			if tc.cfg.ServerAddr == "" {
				var err error
				if r.targets, err = r.choice.pick(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			} else {
				r.targets = &target.External{}
			}
			got := r.preflightSweeps()
			if !slices.Equal(got.SweepCPUs, tc.wantCPUs) || got.Full != tc.wantFull {
				t.Errorf("got sweeps on %v CPUs (full %v), want %v (full %v)", got.SweepCPUs, got.Full, tc.wantCPUs, tc.wantFull)
			}
			d, err := Describe(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var steps int
			for i, p := range d.Plan.Estimate.Phases {
				if p.Name == watch.PhaseSweep {
					if steps = p.Count; i != 0 {
						t.Errorf("got the preflight's steps at phase %d of %+v, want them first", i, d.Plan.Estimate.Phases)
					}
				}
			}
			if steps != tc.wantSteps {
				t.Errorf("tierbench plan: got %d preflight fio steps, want %d (%+v)", steps, tc.wantSteps, d.Plan.Estimate.Phases)
			}
		})
	}
}

// TestCheckPlanHostAsksTheHostsEngines: a plan across hosts is checked on
// the engines its hosts name, not on this host's, and a server host
// elsewhere answers for its own NUMA layout and io_uring (the run's
// preflight there): this host's engine not answering and its single NUMA
// node refuse only a plan whose server runs here. The earlier check
// pinged this host's engine for every docker plan and compared this
// host's NUMA nodes, refusing a driving machine without an engine.
func TestCheckPlanHostAsksTheHostsEngines(t *testing.T) {
	testenv.MustDocker(t)
	engine := client.DefaultDockerHost // this machine's engine, named as a host
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	hosts := func(server, clients string) plan.Config {
		return plan.Config{Workload: results.Workload{ServerHost: server, ClientHosts: clients}}
	}
	needs := plan.Needs{Runtime: plan.RuntimeDocker, Backends: []string{"uring"}, NUMANodes: 64}
	for _, c := range []struct {
		name string
		cfg  plan.Config
		want []string // each in the refusal; none: accepted
	}{
		{"server elsewhere", hosts("a="+engine, ""), nil},
		{"server and clients elsewhere", hosts("a="+engine, "b="+engine+",c="+engine), nil},
		{"a host's engine silent", hosts("a="+engine, "b=unix:///nonexistent/b.sock"),
			[]string{"host b, whose Docker engine (unix:///nonexistent/b.sock) does not answer"}},
		{"server here", hosts("", ""), []string{"this host's engine does not answer", "planned on 64 NUMA node(s)"}},
		{"server here, clients elsewhere", hosts("", "b="+engine), []string{"this host's engine does not answer", "planned on 64 NUMA node(s)"}},
	} {
		err := CheckPlanHost(t.Context(), c.cfg, needs)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: got %v, want the plan accepted", c.name, err)
			}
			continue
		}
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: got %v, want a refusal saying %q", c.name, err, w)
			}
		}
	}
}
