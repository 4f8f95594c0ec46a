package orchestrator

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/fleet"
	"github.com/tierbench/tierbench/orchestrator/pass"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/tlsrow"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// Run runs the matrix cfg describes, writes the results bundle under
// cfg.OutDir (or completes the one named by cfg.Resume), prints the table
// on stdout and progress on stderr. SIGINT and SIGTERM stop it; whatever
// it started is removed on every way out, and the passes already measured
// stay in cells.jsonl for --resume.
func Run(ctx context.Context, cfg plan.Config, stdout, stderr io.Writer) (err error) {
	ctx, stopSignals := notifySignals(ctx)
	defer stopSignals()
	defer func() { err = interrupted(ctx, err) }()
	if cfg.Silent {
		stderr = io.Discard
	}
	if cfg.Scenario == results.ScenarioAll {
		return runAll(ctx, cfg, stdout, stderr)
	}
	r := &runner{stderr: stderr, local: localMachine{proc: "/proc"}}
	if err := r.setup(cfg); err != nil {
		return err
	}
	defer r.removeSecrets()
	// The state dir and the bundle are checked before anything reads or
	// writes them: what the state dir lists decides which processes the
	// sweep kills, and the password file goes there.
	if err := safe.CheckStateDir(r.cfg.StateDir); err != nil {
		return err
	}
	if err := safe.CheckPrivateDir("--out", r.out); err != nil {
		return err
	}
	if err := preflight.CheckFreeMemory(r.cfg, "/proc/meminfo"); err != nil {
		return err
	}
	if err := preflight.CheckLogSpace(r.cfg); err != nil {
		return err
	}
	// An external server is proven before anything is created or started:
	// a wrong pid or nothing listening is refused at once.
	if r.targets, err = r.choice.pick(ctx, r); err != nil {
		return err
	}
	for _, n := range r.cfg.Notes {
		r.printf("%s\n", n)
	}
	for _, e := range r.cfg.FromEnv {
		r.printf("from the environment: %s\n", e)
	}
	if err := r.claimData(); err != nil {
		return err
	}
	defer r.releaseData()
	if err := r.createBundle(); err != nil {
		return err
	}
	r.printf("tierbench run %s: bundle %s\n", r.plan.RunID, r.out)
	if err := r.startWatch(); err != nil {
		return err
	}
	defer func() { r.watch.Stop(ctx, err) }()

	if err := safe.EnsureStateDir(r.cfg.StateDir); err != nil {
		return err
	}
	for _, did := range sweepStale(ctx, r.cfg.StateDir) {
		r.printf("cleanup: %s\n", did)
	}
	if r.local.pids, err = safe.NewPIDFile(r.cfg.StateDir, r.plan.RunID); err != nil {
		return err
	}
	defer r.local.pids.Close()
	defer r.cleanData()

	if err := r.pickDriver(ctx); err != nil {
		// A refusal on a host (its data dir held by another run) leaves
		// no bundle behind: its status goes, and os.Remove takes empty
		// directories only.
		r.watch.DropStatus()
		os.Remove(filepath.Join(r.out, results.DirLogs))
		os.Remove(r.out)
		return err
	}
	r.host = r.drv.Host()
	defer func() {
		// A fresh context: the run's own may be cancelled by a signal,
		// and cleanup must still happen.
		cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if cerr := r.drv.Close(cctx); cerr != nil {
			r.printf("cleanup: %v\n", cerr)
			err = errors.Join(err, cerr)
		}
	}()

	if err := r.protectLocalServers(); err != nil {
		return err
	}
	if err := r.setupTLS(); err != nil {
		return err
	}
	if err := r.writePlan(); err != nil {
		return err
	}
	if err := r.clients.Preflight(ctx); err != nil {
		return err
	}
	r.passes().ResolveDisks(ctx, r.targets.DiskDir())
	if r.cells, err = results.OpenCellsLog(r.out); err != nil {
		return err
	}
	defer r.cells.Close()
	r.watch.CountCells()
	// A row that fails (a server that stops answering, a placement not
	// honoured) is recorded and the others still run: the table shows
	// what could be measured and the run exits non-zero naming the rest.
	// A refused load or a configuration error stops everything.
	var failed []error
	for i, row := range r.plan.Rows {
		r.watch.AtRow(i)
		err := r.runRow(ctx, row)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return fmt.Errorf("orchestrator: interrupted during %s %s: the finished passes are in %s; complete with --resume %s", row.Backend, row.Label, filepath.Join(r.out, results.FileCells), r.out)
		}
		if errors.Is(err, fault.ErrConfig) || errors.Is(err, fault.ErrPreflight) {
			return err
		}
		// A refused row (a partial load, a sampled miss, a wrong process)
		// is recorded and its cells marked; the other rows still run.
		refused := errors.Is(err, fault.ErrRefused)
		verdict := "FAILED"
		if refused {
			verdict = "REFUSED"
		}
		r.printf("%s %s: %s: %v\n", titleCase(row.Backend), row.Label, verdict, err)
		if aerr := r.cells.Append(results.FailRecord{Kind: "fail", Schema: results.SchemaVersion, Row: row, Error: err.Error(), Refused: refused, Time: time.Now().UTC()}); aerr != nil {
			return errors.Join(err, aerr)
		}
		if !refused {
			failed = append(failed, err)
		}
	}
	steps := runStepsAsked(r.cfg)
	r.watch.BeforeSeal(len(failed) > 0 || len(steps) == 0, errors.Join(failed...))
	table, err := report.Render(r.out)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, table)
	if len(steps) > 0 && len(failed) == 0 {
		for _, s := range steps {
			if err := s.run(ctx, r, stdout); err != nil {
				return err
			}
		}
		// Again, so that results.json's checksums cover the steps' files.
		r.watch.BeforeSeal(true, nil)
		if _, err := report.Render(r.out); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("orchestrator: %d of %d rows failed (bundle %s; --resume %s retries them): %w", len(failed), len(r.plan.Rows), r.out, r.out, errors.Join(failed...))
	}
	var res results.Results
	if err := results.ReadJSON(r.out, results.FileResults, &res); err != nil {
		return err
	}
	if err := outcome(res); err != nil {
		r.printf("finished in %s: %s\n", time.Since(r.started).Round(time.Second), r.out)
		return err
	}
	r.printf("done in %s: %s\n", time.Since(r.started).Round(time.Second), r.out)
	return nil
}

type runner struct {
	cfg    plan.Config
	plan   results.Plan
	out    string
	stderr io.Writer
	proc   rig.ProcRoot
	drv    rig.Driver
	auth   string // the server's per-run password; never written
	// authFile is where the servers and clients read auth: a file of the
	// state dir, or the containers' copy ("" across hosts: theirs).
	authFile string
	// passFiles are the files the servers that take the password in a
	// form of their own read it from (sut.Password; target/localauth.go).
	passFiles map[sut.Password]string
	// dataCleaned says cleanData ran: across hosts in the server engine's
	// close, before the data dirs' holds are let go (dockerDriver.beforeDrop).
	dataCleaned bool
	// tls is the TLS material of the servers the run starts (tlsrow);
	// nil without a TLS row. secretDir holds the password file of
	// --server-addr's clients. Both are removed when the run ends.
	tls       *tlsrow.Material
	secretDir string
	// choice is where the rows' servers come from, chosen once at setup;
	// targets, which it picks, gives every row its server (package
	// target, through target_env.go); clients runs its clients (package
	// fleet).
	choice  targetChoice
	targets targetSource
	clients fleet.Fleet
	// host is the machine the servers run on (package rig), from the driver.
	host    rig.ServerHost
	local   localMachine
	cells   *results.CellsLog
	started time.Time
	// passRunner takes the rows' passes (package pass; passes()).
	passRunner *pass.Runner
	// resumed is what the bundle held already when the run began.
	resumed resumedWork
	// watch is the run's progress, status.json and --metrics-addr
	// (package watch), from the bundle's creation on.
	watch *watch.Run
}

// localMachine is what the run holds of this machine: its /proc and
// CPU topology, the pinning planned from it, the run's pid file and its
// claims on the data dirs here (package safe).
type localMachine struct {
	proc    rig.ProcRoot
	topo    rig.Topology
	pinning rig.Pinning
	pids    *safe.PIDFile
	claims  []*safe.DataClaim
}

// resumedWork is what the bundle held when the run began: the passes and
// loads of cells.jsonl and the host preflight, which --resume skips.
type resumedWork struct {
	passes    map[string]bool
	loads     map[string]bool
	preflight bool
}

func (r *runner) printf(format string, a ...any) { fmt.Fprintf(r.stderr, format, a...) }

// setup resolves the configuration, or reads it back from the bundle to
// resume (resumeBundle), and plans the rows of a new run.
func (r *runner) setup(cfg plan.Config) error {
	r.started = time.Now()
	r.local.topo = rig.ReadTopology("/sys", runtime.NumCPU())
	if cfg.Resume != "" {
		return r.resumeBundle(cfg)
	}
	resolved, err := cfg.Resolve(os.Getenv, parts)
	if err != nil {
		return err
	}
	r.cfg = resolved
	r.plan = results.Plan{Schema: results.SchemaVersion, RunID: newRunID(), Started: r.started, MaxMisses: resolved.MaxMissRatio}
	r.out = resolved.OutDir
	if r.out == "" {
		r.out = filepath.Join(plan.DefaultOutParent, r.plan.RunID)
	}
	r.cfg.OutDir = r.out
	r.resumed.passes = map[string]bool{}
	r.resumed.loads = map[string]bool{}
	r.choice = chooseTargets(r.cfg)
	if err := r.setupHost(); err != nil {
		return err
	}
	rows, err := r.choice.rows(r)
	if err != nil {
		return err
	}
	rows = target.ExpandShards(r.cfg, rows)
	for _, p := range parts {
		if d, ok := p.(plan.Dimension); ok {
			rows = d.Expand(r.cfg, rows)
		}
	}
	r.plan.Rows = rows
	return nil
}

// resumeBundle reads the configuration and the plan back from the bundle
// --resume names, and what it holds already; its rows are the plan's.
func (r *runner) resumeBundle(cfg plan.Config) error {
	var bundlePlan results.Plan
	if err := results.ReadJSON(cfg.Resume, results.FilePlan, &bundlePlan); err != nil {
		return fmt.Errorf("orchestrator: --resume: %w", err)
	}
	if bundlePlan.Schema > results.SchemaVersion {
		return fmt.Errorf("orchestrator: --resume %s: schema_version %d is newer than %d", cfg.Resume, bundlePlan.Schema, results.SchemaVersion)
	}
	// A run seals its bundle when it renders; resuming seals it again.
	// What the seal vouched for and was changed since would be sealed
	// with it unseen: refused, as report refuses to render it.
	edited, err := results.Edited(cfg.Resume, watch.FileStatus)
	if err != nil {
		return fmt.Errorf("orchestrator: --resume %s: %w", cfg.Resume, err)
	}
	if len(edited) > 0 {
		return fmt.Errorf("%w: --resume %s: the bundle changed since its run sealed it (%s): resuming would seal the change unseen; look at what changed, and accept it with `tierbench report --resign WHY %s` first if it is yours",
			fault.ErrConfig, cfg.Resume, strings.Join(edited, "; "), cfg.Resume)
	}
	// The plan decides what is measured; how it is run may change.
	saved := plan.ConfigOf(bundlePlan.Workload)
	choice := chooseTargets(saved)
	choice.fromBundle(&saved)
	saved.Resume, saved.OutDir = cfg.Resume, cfg.Resume
	// Keep the runtime the run began with unless told otherwise: one
	// bundle should not mix containers and processes by accident.
	saved.Runtime = cmp.Or(cfg.Runtime, bundlePlan.Runtime)
	saved.Binary, saved.Force, saved.Silent, saved.KeepData = cfg.Binary, cfg.Force, cfg.Silent, cfg.KeepData
	// The password is read again where the run first read it (the
	// bundlePlan records the file or variable, never the password), unless
	// told another place.
	if cfg.AuthFile != "" || cfg.AuthEnv != "" {
		saved.AuthFile, saved.AuthEnv = cfg.AuthFile, cfg.AuthEnv
	}
	saved.MetricsAddr = cfg.MetricsAddr
	if cfg.StateDir != "" {
		saved.StateDir = cfg.StateDir
	}
	resolved, err := saved.Resolve(func(string) string { return "" }, parts)
	if err != nil {
		return err
	}
	r.cfg, r.plan, r.out, r.choice = resolved, bundlePlan, cfg.Resume, choice
	r.plan.Workload = resolved.Record()
	passes, loads, err := results.ReadCells(r.out)
	if err != nil {
		return err
	}
	r.resumed.passes = results.DonePasses(passes)
	if _, err := os.Stat(filepath.Join(r.out, results.FilePreflight)); err == nil {
		r.resumed.preflight = true
	}
	r.resumed.loads = map[string]bool{}
	for _, l := range loads {
		r.resumed.loads[l.Row.ID()] = true
	}
	return r.setupHost()
}

// setupHost fills in what this host gives the run: the tierbench binary
// when not named, and the plan's NUMA nodes and host name.
func (r *runner) setupHost() error {
	if r.cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("orchestrator: locate the tierbench binary: %w", err)
		}
		r.cfg.Binary = exe
	}
	r.plan.Nodes = len(r.local.topo.Nodes)
	r.plan.Hostname, _ = os.Hostname()
	return nil
}

// createBundle creates the bundle's directories, after every check that
// can refuse the run: a refused run leaves nothing behind.
func (r *runner) createBundle() error {
	if _, err := safe.MakePrivateDir("--out", r.out, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(r.out, results.DirLogs), 0o755); err != nil {
		return fmt.Errorf("orchestrator: create the bundle: %w", err)
	}
	return nil
}

// rows lists the rows of the servers the run starts in the reference's
// order: per server and backend the pinned row, then the unpinned one.
func (ownChoice) rows(r *runner) ([]results.Row, error) {
	servers, err := r.cfg.Systems()
	if err != nil {
		return nil, err
	}
	var rows []results.Row
	for _, s := range servers {
		for _, b := range r.cfg.Backends {
			for _, p := range r.cfg.Pins {
				row := results.Row{Backend: b, Pin: p, Label: "no pin"}
				if r.cfg.NamesServers() {
					row.Server = s.Name
				}
				if p == plan.PinPinned {
					pin, err := r.local.topo.Pinned()
					if err != nil {
						return nil, err
					}
					row.Label = pin.Label
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

func newRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func (r *runner) writePlan() error {
	r.plan.Workload = r.cfg.Record()
	return results.WriteJSON(r.out, results.FilePlan, r.plan)
}

// stepsTodo reports whether row still lacks what its steps measure: the
// fleet's merged online phase across hosts, or what a registered row
// step says it lacks (--resume asks this before it skips a row whose
// passes are all done).
func (r *runner) stepsTodo(row results.Row) (bool, error) {
	if done, err := r.clients.OnlineDone(row); !done || err != nil {
		return !done, err
	}
	for _, s := range rowSteps {
		if s.todo == nil || !s.asked(r.cfg) {
			continue
		}
		if todo, err := s.todo(rowEnv{r: r, row: row}); todo || err != nil {
			return todo, err
		}
	}
	return false, nil
}

func (r *runner) runRow(ctx context.Context, row results.Row) error {
	if r.watch.PassesLeft(row) == 0 {
		latency, err := r.stepsTodo(row)
		if err != nil {
			return err
		}
		if !latency {
			r.printf("%s %s: done already, skipped\n", titleCase(row.Backend), row.Label)
			return nil
		}
		r.printf("%s %s: passes done already, what its steps measure not all in the bundle: measuring that\n", titleCase(row.Backend), row.Label)
	}
	tgt, err := r.targets.Start(ctx, row)
	if err != nil {
		return err
	}
	if tgt.Handle != nil {
		defer func() {
			// The reference's 30 s grace, or 5 s when interrupted.
			grace := 30 * time.Second
			if ctx.Err() != nil {
				grace = 5 * time.Second
			}
			cctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			tgt.Handle.Stop(cctx)
		}()
	}
	r.watch.Phase(watch.PhaseLoad, &row, "")
	if err := r.passes().LoadAndVerify(ctx, row, tgt); err != nil {
		return err
	}
	if r.cfg.WarmupSeconds == 0 {
		r.printf("%s %s: no warm-up (--warmup-seconds 0)\n", titleCase(row.Backend), row.Label)
	} else {
		r.printf("%s %s: warm-up, %d s at t=%d\n", titleCase(row.Backend), row.Label, r.cfg.WarmupSeconds, slices.Max(r.cfg.Threads))
		r.watch.Phase(watch.PhaseWarmup, &row, "")
		if _, _, err := r.clients.Bench(ctx, row, tgt, "warmup", slices.Max(r.cfg.Threads), r.cfg.WarmupSeconds); err != nil {
			return fmt.Errorf("orchestrator: warm-up of %s %s: %w", row.Backend, row.Label, err)
		}
	}
	for p := 1; p <= r.cfg.Passes; p++ {
		for _, t := range r.cfg.Threads {
			if r.resumed.passes[results.PassKey(row, t, p)] {
				continue
			}
			if err := r.passes().Measure(ctx, row, tgt, t, p); err != nil {
				return err
			}
			r.resumed.passes[results.PassKey(row, t, p)] = true
		}
	}
	if err := r.passes().RecheckAfterMix(ctx, row, tgt); err != nil {
		return err
	}
	if err := r.clients.Online(ctx, row, tgt); err != nil {
		return err
	}
	for _, s := range rowSteps {
		if !s.asked(r.cfg) {
			continue
		}
		r.watch.Phase(s.phase, &row, "")
		if err := s.run(ctx, rowEnv{r, row, tgt}); err != nil {
			return err
		}
	}
	r.watch.PhaseIf(r.watch.RerunsFio(row), watch.PhaseFio, &row)
	if err := ceiling.MeasureFioCPU(ctx, r.ceilingEnv(), row); err != nil {
		return err
	}
	return ceiling.Recheck(ctx, r.ceilingEnv(), row)
}
