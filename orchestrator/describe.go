package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/fleet"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// Description is what a run of a configuration would do on this host,
// planned as Run plans it and nothing run: Plan is the plan file
// `tierbench plan` prints, Config the configuration it resolved to,
// Notes what the resolution decided that was not asked.
type Description struct {
	Config plan.Config
	Plan   plan.File
	Notes  []string
}

// Describe resolves cfg as Run does and plans its rows on this host's
// topology, with the dataset, the disk and memory it needs and the
// estimate the run's status would start from (phases counted from the
// plan at the default rates: the preflight's fio sweeps, and fio re-runs
// where the ceiling applies, at --fio-seconds). It starts, writes and
// measures nothing.
func Describe(cfg plan.Config) (Description, error) {
	if cfg.Scenario == results.ScenarioAll {
		return describeAll(cfg)
	}
	r := &runner{stderr: nil, local: localMachine{proc: "/proc"}}
	if cfg.Resume != "" {
		return Description{}, fmt.Errorf("%w: tierbench plan describes a new run; --resume completes a bundle's own plan", fault.ErrConfig)
	}
	if err := r.setup(cfg); err != nil {
		return Description{}, err
	}
	if r.cfg.ServerAddr == "" && slices.Contains(r.cfg.Pins, plan.PinPinned) {
		// As ownChoice.pick places a run's pinned rows: the preflight's
		// second sweep runs on the pinned server's CPUs.
		r.local.pinning, _ = r.local.topo.Pinned()
	}
	c := r.cfg
	rows := r.plan.Rows
	f := plan.File{Schema: plan.FileSchema, Kind: plan.FileKind, Workload: c.Record(), Rows: rows,
		Needs: plan.NeedsOf(c, r.plan.Nodes), Dataset: datasetOf(c), Estimate: watch.PlanEstimate(c, r.preflightSweeps(), rows, ceiling.RowEngine, watchSteps())}
	// Where this host runs it is no part of the plan.
	f.Workload.OutDir, f.Workload.StateDir, f.Workload.Binary = "", "", ""
	if !c.Explicit("data") {
		// This host's default, which a run elsewhere replaces by its own.
		f.Workload.DataDir, f.Workload.DataDirs = "", nil
	}
	return Description{Config: c, Plan: f, Notes: c.Notes}, nil
}

// describeAll is Describe of each scenario of a --scenario all run: one
// plan whose rows are every scenario's in the order all runs them.
func describeAll(cfg plan.Config) (Description, error) {
	var out Description
	for _, s := range results.Scenarios {
		d, err := Describe(scenarioConfig(cfg, s))
		if err != nil {
			return Description{}, fmt.Errorf("scenario %s: %w", s, err)
		}
		if out.Plan.Kind == "" {
			out = d
			out.Plan.Workload = cfg.Record()
			out.Plan.Workload.Scenario = results.ScenarioAll
			out.Plan.Workload.OutDir, out.Plan.Workload.StateDir, out.Plan.Workload.Binary = "", "", ""
			continue
		}
		out.Plan.Rows = append(out.Plan.Rows, d.Plan.Rows...)
		out.Plan.Estimate.Seconds += d.Plan.Estimate.Seconds
		out.Plan.Estimate.Phases = append(out.Plan.Estimate.Phases, d.Plan.Estimate.Phases...)
		out.Plan.Dataset.DiskBytes = max(out.Plan.Dataset.DiskBytes, d.Plan.Dataset.DiskBytes)
		out.Plan.Dataset.MemoryBytes = max(out.Plan.Dataset.MemoryBytes, d.Plan.Dataset.MemoryBytes)
		out.Plan.Needs.Backends = append(out.Plan.Needs.Backends, d.Plan.Needs.Backends...)
		out.Plan.Needs.NUMANodes = max(out.Plan.Needs.NUMANodes, d.Plan.Needs.NUMANodes)
		out.Notes = append(out.Notes, d.Notes...)
	}
	return out, nil
}

// datasetOf is the data a run loads and what it needs on disk and in RAM.
func datasetOf(c plan.Config) *plan.Dataset {
	rec := results.RecordBytes(c.KeyLength, c.ValueLength)
	d := &plan.Dataset{Keys: c.DBSize, RecordBytes: rec, Bytes: c.DBSize * int64(rec)}
	if c.ServerAddr != "" {
		return d // nothing of the server's is this run's to size
	}
	spec := c.Spec()
	if spec.Tiered && !spec.InRAM {
		total, _, _, _ := preflight.LogGrowth(c)
		d.DiskBytes = total
	}
	if plan.FioPlanned(c) {
		d.DiskBytes += d.Bytes // fio's files are as large as the dataset
	}
	mem, _ := size.Parse(c.LargestMemory())
	index, _ := size.Parse(c.Index)
	var cache int64
	if sizes, err := plan.SplitList(c.ReadCacheMemory); err == nil {
		for _, s := range sizes {
			if n, err := size.Parse(s); err == nil {
				cache = max(cache, n)
			}
		}
	}
	d.MemoryBytes = int64(c.MaxShards()) * (mem + index + cache)
	if spec.InRAM {
		d.MemoryBytes += d.Bytes
	}
	return d
}

// CheckPlanHost refuses, before anything starts, a plan cfg whose needs
// n the hosts it runs on cannot give: the Docker engine of each host it
// names (this host's for a docker plan without hosts), and where its
// server runs here, the NUMA nodes its pinned rows were planned on,
// io_uring for uring rows, the programs of its servers, its images. A
// server host elsewhere is checked by the run itself, which proves
// O_DIRECT and io_uring inside its server container (preflight) and pins
// on that host's own layout. Each refusal is a sentence; all are given.
func CheckPlanHost(ctx context.Context, cfg plan.Config, n plan.Needs) error {
	var engines []docker.Endpoint
	if cfg.HostsMode() {
		srv, clients, err := fleet.Endpoints(cfg)
		if err != nil {
			return err
		}
		for _, e := range append([]docker.Endpoint{srv}, clients...) {
			if !slices.ContainsFunc(engines, func(o docker.Endpoint) bool { return o.Host == e.Host }) {
				engines = append(engines, e)
			}
		}
	}
	var errs []error
	for _, e := range engines {
		if e.Host == "" {
			continue // this host's engine: asked below, as a docker plan's
		}
		if err := pingEngine(ctx, e); err != nil {
			errs = append(errs, fmt.Errorf("the plan runs on host %s, whose Docker engine (%s) does not answer: %v", e.Name, e.Display(), err))
		}
	}
	if cfg.HostsMode() && !cfg.ServerHostLocal() {
		// Nothing runs on this host but the clients the hosts name.
		n = plan.Needs{Runtime: n.Runtime}
		if !slices.ContainsFunc(engines, func(e docker.Endpoint) bool { return e.Host == "" }) {
			n.Runtime = ""
		}
	}
	h := plan.Host{
		NUMANodes: len(rig.ReadTopology("/sys", runtime.NumCPU()).Nodes),
		LookPath:  exec.LookPath,
		Programs: func(name string) []string {
			s, err := sut.Lookup(name)
			if err != nil {
				return []string{name}
			}
			var out []string
			for _, p := range s.Programs {
				out = append(out, cmp.Or(p.Launcher, p.Binary))
			}
			return out
		},
	}
	for _, b := range n.Backends {
		if b == "uring" {
			h.IOUring = hostcheck.ProbeIOUring()
		}
	}
	if n.NeedsEngine() {
		cli, err := docker.Endpoint{}.Client()
		if err == nil {
			defer cli.Close()
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if _, err = cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err == nil && len(n.Images) > 0 {
				h.Image = func(ref string) (bool, error) {
					_, ierr := cli.ImageInspect(pctx, ref)
					if ierr != nil && !cerrdefs.IsNotFound(ierr) {
						return false, ierr
					}
					return ierr == nil, nil
				}
			}
		}
		h.Docker = err
	}
	if err := errors.Join(append(errs, plan.CheckHost(n, h, cfg.Pull))...); err != nil {
		host, _ := os.Hostname()
		return fmt.Errorf("%w: this host (%s) cannot run the plan:\n%w", fault.ErrConfig, host, err)
	}
	return nil
}

// pingEngine asks the engine at e whether it answers, within 10 s.
func pingEngine(ctx context.Context, e docker.Endpoint) error {
	cli, err := e.Client()
	if err != nil {
		return err
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true})
	return err
}
