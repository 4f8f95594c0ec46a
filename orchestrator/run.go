package orchestrator

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Verification thresholds of the methodology.
const (
	// minLoadedShare: the loader's acknowledgements and the server's key
	// count must each reach 99 % of dbsize.
	minLoadedShare = 0.99
	// minDeviceShare: ≥ 99 % of the hybrid log below HeadAddress, unless
	// the part above it is no larger than --memory (the store evicted all
	// it could) and the dataset is ≥ 20 × memory, as validate requires.
	minDeviceShare = 0.99
	// sectorBytes is the device's logical block: a storage-bound GET of a
	// record smaller than it reads at least one.
	sectorBytes = 512
	// minSectorShare: a cell is memory-served below this share of a
	// sector per GET. The dataset is ≥ 20 × --memory, so up to 1/20 of the
	// keys may be answered from the in-memory log and an honest cell reads
	// ≥ 95 % of a sector per GET (the reference's 100 M keys: 99.9 %); a
	// cell served from memory reads next to nothing.
	minSectorShare = 0.9
)

// Run runs the matrix cfg describes, writes the results bundle under
// cfg.OutDir (or completes the one named by cfg.Resume), prints the table
// on stdout and progress on stderr. SIGINT and SIGTERM stop it; whatever
// it started is removed on every way out, and the passes already measured
// stay in cells.jsonl for --resume.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (err error) {
	ctx, stopSignals := notifySignals(ctx)
	defer stopSignals()
	defer func() { err = interrupted(ctx, err) }()
	if cfg.Silent {
		stderr = io.Discard
	}
	if cfg.Scenario == ScenarioAll {
		return runAll(ctx, cfg, stdout, stderr)
	}
	r := &runner{stderr: stderr, proc: "/proc", diskRoot: "/"}
	if err := r.setup(cfg); err != nil {
		return err
	}
	if err := r.cfg.checkFreeMemory("/proc/meminfo"); err != nil {
		return err
	}
	// An external server is proven before anything is created or started:
	// a wrong pid or nothing listening is refused at once.
	if r.cfg.ServerAddr != "" {
		if r.extNodes, err = r.externalCluster(ctx); err != nil {
			return err
		}
	}
	if r.cfg.ServerAddr != "" && r.extNodes == nil {
		proof, err := r.proc.proveServer(ctx, r.cfg.ServerAddr, r.cfg.ServerPID)
		if err != nil {
			return err
		}
		r.proof = &proof
		r.cfg.ServerPID = proof.PID
		r.printf("server: %s\n", proof.sentence())
	}
	if err := r.createBundle(); err != nil {
		return err
	}
	r.printf("tierbench run %s: bundle %s\n", r.plan.RunID, r.out)

	for _, did := range sweepStale(ctx, r.cfg.StateDir) {
		r.printf("cleanup: %s\n", did)
	}
	if r.pids, err = newPidFile(r.cfg.StateDir, r.plan.RunID); err != nil {
		return err
	}
	defer r.pids.close()
	r.prepareDataDir()
	defer r.cleanData()
	defer r.cleanShardDirs()

	if err := r.pickDriver(ctx); err != nil {
		return err
	}
	defer func() {
		// A fresh context: the run's own may be cancelled by a signal,
		// and cleanup must still happen.
		cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if cerr := r.drv.close(cctx); cerr != nil {
			r.printf("cleanup: %v\n", cerr)
			err = errors.Join(err, cerr)
		}
	}()

	if err := r.writePlan(); err != nil {
		return err
	}
	if err := r.preflight(ctx); err != nil {
		return err
	}
	r.resolveDisks()
	if r.cells, err = openCellsLog(r.out); err != nil {
		return err
	}
	defer r.cells.Close()
	r.countWork()
	// A row that fails (a server that stops answering, a placement not
	// honoured) is recorded and the others still run: the table shows
	// what could be measured and the run exits non-zero naming the rest.
	// A refused load or a configuration error stops everything.
	var failed []error
	for i, row := range r.plan.Rows {
		r.rowIndex = i
		err := r.runRow(ctx, row)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return fmt.Errorf("orchestrator: interrupted during %s %s: the finished passes are in %s; complete with --resume %s", row.Backend, row.Label, filepath.Join(r.out, fileCells), r.out)
		}
		if errors.Is(err, ErrConfig) || errors.Is(err, errPreflight) {
			return err
		}
		// A refused row (a partial load, a sampled miss, a wrong process)
		// is recorded and its cells marked; the other rows still run.
		refused := errors.Is(err, ErrRefused)
		verdict := "FAILED"
		if refused {
			verdict = "REFUSED"
		}
		r.printf("%s %s: %s: %v\n", titleCase(row.Backend), row.Label, verdict, err)
		if aerr := r.cells.append(FailRecord{Kind: "fail", Schema: SchemaVersion, Row: row, Error: err.Error(), Refused: refused, Time: time.Now().UTC()}); aerr != nil {
			return errors.Join(err, aerr)
		}
		if !refused {
			failed = append(failed, err)
		}
	}
	table, err := render(r.out)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, table)
	if r.cfg.Ladder && len(failed) == 0 {
		if err := r.runLadder(ctx, stdout); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("orchestrator: %d of %d rows failed (bundle %s; --resume %s retries them): %w", len(failed), len(r.plan.Rows), r.out, r.out, errors.Join(failed...))
	}
	var res Results
	if err := readJSON(r.out, fileResults, &res); err != nil {
		return err
	}
	if err := outcome(res); err != nil {
		r.printf("finished in %s: %s\n", time.Since(r.started).Round(time.Second), r.out)
		return err
	}
	r.printf("done in %s: %s\n", time.Since(r.started).Round(time.Second), r.out)
	return nil
}

// errPreflight marks a failed preflight: it stops the run.
var errPreflight = errors.New("orchestrator: preflight failed")

// phaseGraceSeconds is how long a GET phase may overrun its --runtime
// before the client is killed and the row fails: a server that stops
// answering must not hang the run.
const phaseGraceSeconds = 60

// loadStallTimeout fails a load whose key count stops growing.
const loadStallTimeout = 90 * time.Second

type runner struct {
	cfg    Config
	plan   Plan
	out    string
	stderr io.Writer
	proc   procRoot
	drv    driver
	hosts  *hostsDriver // across hosts; nil on one machine
	auth   string       // the server's per-run password; never written
	// remote reads the counters of a server on another host (nil: here).
	remote  *remoteProbe
	netDone bool // the hosts' network preflight ran
	pids    *pidFile
	cells   *cellsLog
	started time.Time
	topo    topology
	pinning pinning
	proof   *OwnerProof // the external server's, proven before the run
	// extNodes are the external server's masters when it is a cluster node.
	extNodes []*clusterNode
	// dataCreated says the run created DataDir, so it removes it at the end.
	dataCreated bool

	// The evidence sampled around every GET phase (evidence.go).
	diskRoot  string   // where proc/diskstats is read: "/" outside tests
	disks     []string // the physical disks below the data dir
	disksNote string   // why disks is empty

	done      map[string]bool // passes already in cells.jsonl
	loadsDone map[string]bool
	cellTotal int
	cellIndex int
	cellTime  time.Duration // measured time of the cells run so far
	// loadedKeys and loadTime are the loads measured so far, for the
	// progress estimate of the loads still ahead.
	loadedKeys int64
	loadTime   time.Duration
	rowIndex   int // the row being run, for the estimate of what is ahead
}

func (r *runner) printf(format string, a ...any) { fmt.Fprintf(r.stderr, format, a...) }

// setup resolves the configuration, or reads it back from the bundle to
// resume, and plans the rows.
func (r *runner) setup(cfg Config) error {
	r.started = time.Now()
	if cfg.Resume != "" {
		var plan Plan
		if err := readJSON(cfg.Resume, filePlan, &plan); err != nil {
			return fmt.Errorf("orchestrator: --resume %s: %w", cfg.Resume, err)
		}
		if plan.Schema > SchemaVersion {
			return fmt.Errorf("orchestrator: --resume %s: schema_version %d is newer than %d", cfg.Resume, plan.Schema, SchemaVersion)
		}
		// The plan decides what is measured; how it is run may change.
		saved := plan.Config
		if saved.ServerAddr != "" {
			// Bundles written before external runs recorded only what
			// ran carry tierbench's server defaults, which validate refuses.
			saved.Backends, saved.Pins, saved.Memory, saved.Page, saved.Segment, saved.Index = nil, nil, "", "", "", ""
		}
		saved.Resume, saved.OutDir = cfg.Resume, cfg.Resume
		// Keep the runtime the run began with unless told otherwise: one
		// bundle should not mix containers and processes by accident.
		saved.Runtime = cmp.Or(cfg.Runtime, plan.Runtime)
		saved.Binary, saved.Force, saved.Silent, saved.KeepData = cfg.Binary, cfg.Force, cfg.Silent, cfg.KeepData
		if cfg.StateDir != "" {
			saved.StateDir = cfg.StateDir
		}
		resolved, err := saved.resolve(func(string) string { return "" })
		if err != nil {
			return err
		}
		r.cfg, r.plan, r.out = resolved, plan, cfg.Resume
		r.plan.Config = resolved
		passes, loads, err := readCells(r.out)
		if err != nil {
			return err
		}
		r.done = donePasses(passes)
		r.loadsDone = map[string]bool{}
		for _, l := range loads {
			r.loadsDone[l.Row.key()] = true
		}
	} else {
		resolved, err := cfg.resolve(os.Getenv)
		if err != nil {
			return err
		}
		r.cfg = resolved
		r.plan = Plan{Schema: SchemaVersion, RunID: newRunID(), Started: r.started, MaxMisses: resolved.MaxMissRatio}
		r.out = resolved.OutDir
		if r.out == "" {
			r.out = filepath.Join("results", r.plan.RunID)
		}
		r.cfg.OutDir = r.out
		r.done = map[string]bool{}
		r.loadsDone = map[string]bool{}
	}
	if r.cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("orchestrator: locate the tierbench binary: %w", err)
		}
		r.cfg.Binary = exe
	}
	r.topo = readTopology("/sys", runtime.NumCPU())
	r.plan.Nodes = len(r.topo.Nodes)
	r.plan.Hostname, _ = os.Hostname()
	if r.cfg.Resume == "" {
		rows, err := r.planRows()
		if err != nil {
			return err
		}
		r.plan.Rows = r.cfg.scenarioRows(r.expandShards(rows))
	}
	if slices.Contains(r.cfg.Pins, PinPinned) && r.cfg.ServerAddr == "" {
		p, err := r.topo.pinned()
		if err != nil {
			return err
		}
		r.pinning = p
	}
	return nil
}

// createBundle creates the bundle's directories, after every check that
// can refuse the run: a refused run leaves nothing behind.
func (r *runner) createBundle() error {
	if err := os.MkdirAll(filepath.Join(r.out, dirLogs), 0o755); err != nil {
		return fmt.Errorf("orchestrator: create the bundle: %w", err)
	}
	return nil
}

// planRows lists the rows in the reference's order: per backend the
// pinned row, then the unpinned one.
func (r *runner) planRows() ([]Row, error) {
	if r.cfg.ServerAddr != "" {
		return []Row{{Backend: "external", Pin: PinNone, Label: "no pin (" + r.cfg.ServerAddr + ")"}}, nil
	}
	var rows []Row
	for _, b := range r.cfg.Backends {
		for _, p := range r.cfg.Pins {
			row := Row{Backend: b, Pin: p, Label: "no pin"}
			if p == PinPinned {
				pin, err := r.topo.pinned()
				if err != nil {
					return nil, err
				}
				row.Label = pin.Label
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func newRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func (r *runner) pickDriver(ctx context.Context) error {
	if r.cfg.hostsMode() {
		return r.pickHosts(ctx)
	}
	runtimeName := r.cfg.Runtime
	if r.cfg.ServerAddr != "" {
		runtimeName = RuntimeProcess // only the client runs; locally
	}
	if r.cfg.maxShards() > 1 && runtimeName != RuntimeProcess {
		r.printf("runtime: process (--shards %s starts its shards as pinned processes)\n", formatPIDs(r.cfg.shardCounts()))
		runtimeName = RuntimeProcess
	}
	if runtimeName == RuntimeDocker || runtimeName == RuntimeAuto {
		d, err := newDockerDriver(ctx, Endpoint{}, r.cfg.Binary, r.plan.RunID)
		if err == nil {
			d.warn = r.printf
			r.printf("runtime: docker (image %s)\n", d.image)
			r.drv = d
			r.plan.Runtime = RuntimeDocker
			return nil
		}
		if runtimeName == RuntimeDocker {
			return err
		}
		r.printf("runtime: process (no Docker engine: %v)\n", err)
	}
	r.drv = newProcessDriver(r.cfg.Binary, r.pids)
	r.plan.Runtime = RuntimeProcess
	return nil
}

func (r *runner) writePlan() error {
	r.plan.Config = r.cfg
	return writeJSON(r.out, filePlan, r.plan)
}

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

// countWork counts the passes still to measure, for the progress line.
func (r *runner) countWork() {
	for _, row := range r.plan.Rows {
		for p := 1; p <= r.cfg.Passes; p++ {
			for _, t := range r.cfg.Threads {
				if !r.done[passKey(row, t, p)] {
					r.cellTotal++
				}
			}
		}
	}
}

// rowTarget is where one row's server answers.
type rowTarget struct {
	addr string
	pid  int // 0 = unknown
	srv  serverHandle
	// probe reaches the server and reads its evidence; counted says
	// whether its device reads can be counted (a pid here, or a host
	// that reads its own /proc).
	probe   serverProbe
	counted bool
	// uringProbe is the io_uring check of the preflight run where the
	// server runs, for a uring row.
	uringProbe string
	proof      *OwnerProof // pid proven to own the socket at addr
	// nodes are the masters when the server is a cluster (shards.go).
	nodes []*clusterNode
}

func (r *runner) runRow(ctx context.Context, row Row) error {
	if r.rowTodo(row) == 0 {
		r.printf("%s %s: done already, skipped\n", titleCase(row.Backend), row.Label)
		return nil
	}
	tgt, err := r.startTarget(ctx, row)
	if err != nil {
		return err
	}
	if tgt.srv != nil {
		defer func() {
			// The reference's 30 s grace, or 5 s when interrupted.
			grace := 30 * time.Second
			if ctx.Err() != nil {
				grace = 5 * time.Second
			}
			cctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			tgt.srv.stop(cctx)
		}()
	}
	if err := r.loadAndVerify(ctx, row, tgt); err != nil {
		return err
	}
	if r.cfg.WarmupSeconds == 0 {
		r.printf("%s %s: no warm-up (--warmup-seconds 0)\n", titleCase(row.Backend), row.Label)
	} else {
		r.printf("%s %s: warm-up, %d s at t=%d\n", titleCase(row.Backend), row.Label, r.cfg.WarmupSeconds, slices.Max(r.cfg.Threads))
		if _, _, err := r.bench(ctx, row, tgt, "warmup", slices.Max(r.cfg.Threads), r.cfg.WarmupSeconds); err != nil {
			return fmt.Errorf("orchestrator: warm-up of %s %s: %w", row.Backend, row.Label, err)
		}
	}
	for p := 1; p <= r.cfg.Passes; p++ {
		for _, t := range r.cfg.Threads {
			if r.done[passKey(row, t, p)] {
				continue
			}
			if err := r.measure(ctx, row, tgt, t, p); err != nil {
				return err
			}
		}
	}
	if r.hosts != nil {
		if err := r.latencyHosts(ctx, row, tgt); err != nil {
			return err
		}
	}
	if err := r.latencySteps(ctx, row, tgt); err != nil {
		return err
	}
	return r.recheckCeiling(ctx, row)
}

// startTarget starts a fresh server on a wiped data dir, or attaches to
// the external one.
func (r *runner) startTarget(ctx context.Context, row Row) (rowTarget, error) {
	if r.cfg.ServerAddr != "" && r.extNodes != nil {
		return rowTarget{addr: r.cfg.ServerAddr, proof: r.extNodes[0].proof, nodes: r.extNodes}, nil
	}
	if r.cfg.ServerAddr != "" {
		tgt := rowTarget{addr: r.cfg.ServerAddr, pid: r.cfg.ServerPID, proof: r.proof, counted: r.cfg.ServerPID > 0}
		tgt.probe = r.probeFor(tgt)
		return tgt, nil
	}
	if row.Shards > 1 {
		return r.startShards(ctx, row)
	}
	if err := r.wipeData(ctx); err != nil {
		return rowTarget{}, err
	}
	port, err := r.serverPort()
	if err != nil {
		return rowTarget{}, err
	}
	spec := serverSpec{
		Name:    row.Backend + "-" + row.Pin,
		Args:    r.serverArgs(row, port, r.cfg.DataDir),
		LogPath: filepath.Join(r.out, dirLogs, fmt.Sprintf("server-%s-%s.log", row.Backend, row.Pin)),
		DataDir: r.cfg.DataDir,
	}
	spec.Args = append(spec.Args, r.authArgs()...)
	if row.Pin == PinPinned {
		spec.CPUs, spec.Mems = r.pinning.ServerCPUs, r.pinning.ServerMems
	}
	r.printf("%s %s: starting the server%s on a wiped %s\n", titleCase(row.Backend), row.Label, r.hostsNote(), r.cfg.DataDir)
	srv, err := r.drv.startServer(ctx, spec)
	if err != nil {
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	tgt := rowTarget{addr: net.JoinHostPort(r.bindAddr(), strconv.Itoa(port)), pid: srv.pid(), srv: srv}
	tgt.probe = r.probeFor(tgt)
	_, tgt.counted = tgt.probe.(remoteProbe)
	tgt.counted = tgt.counted || tgt.pid > 0
	if err := waitProbe(ctx, tgt.probe, 60*time.Second); err != nil {
		srv.stop(context.Background())
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: server never answered: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	// The pid whose /proc/<pid>/io is read must be the one that answers.
	proof, err := tgt.probe.prove(ctx)
	if err != nil {
		srv.stop(context.Background())
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, err)
	}
	tgt.proof = &proof
	if err := r.serverPreflight(ctx, row, srv, r.cfg.DataDir, &tgt); err != nil {
		srv.stop(context.Background())
		return rowTarget{}, err
	}
	if r.hosts != nil && !r.netDone {
		if err := r.networkPreflight(ctx, tgt); err != nil {
			srv.stop(context.Background())
			return rowTarget{}, err
		}
		r.netDone = true
	}
	return tgt, nil
}

// serverArgs are the flags of one tiered server of row on port, its log
// under dataDir.
func (r *runner) serverArgs(row Row, port int, dataDir string) []string {
	if isScenarioRow(row) {
		return r.scenarioServerArgs(row, port)
	}
	return []string{"server", "--port", strconv.Itoa(port), "--bind", r.bindAddr(),
		"--memory", r.cfg.Memory, "--page", r.cfg.Page, "--segment", r.cfg.Segment, "--index", r.cfg.Index,
		"--storage-tier", "--logdir", r.drv.dataPath(dataDir),
		"--device-type", "native", "--device-io-backend", row.Backend}
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

func wipeDir(dir string) error {
	if dir == "" || dir == "/" {
		return fmt.Errorf("orchestrator: refusing to wipe data dir %q", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("orchestrator: wipe data dir: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("orchestrator: wipe data dir: %w", err)
		}
	}
	return os.MkdirAll(dir, 0o755)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("orchestrator: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitPing(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		c, err := dialRESP(ctx, addr)
		if err == nil {
			_, err = c.do("PING")
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// loadProgress prints the server's key count every two seconds until
// the returned function is called; when the count stops growing for
// loadStallTimeout it cancels the load through stall.
func (r *runner) loadProgress(ctx context.Context, tgt rowTarget, stall context.CancelCauseFunc) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		start := time.Now()
		var last int64 = -1
		lastGrew := time.Now()
		for {
			if time.Since(lastGrew) > loadStallTimeout {
				stall(fmt.Errorf("orchestrator: the server's key count stayed at %d for %v: the load stalled", last, loadStallTimeout))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n, err := rowKeyCount(ctx, tgt)
			if err == nil && n != last {
				last, lastGrew = n, time.Now()
			}
			if err == nil {
				rate := float64(n) / time.Since(start).Seconds()
				left := ""
				if rate > 0 && n < r.cfg.DBSize {
					left = fmt.Sprintf(", ~%.0fs left", float64(r.cfg.DBSize-n)/rate)
				}
				r.printf("  load: %d / %d keys (%.1f %%)%s\n", n, r.cfg.DBSize, 100*float64(n)/float64(r.cfg.DBSize), left)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// bench runs one GET phase of `threads` connections for `seconds`.
func (r *runner) bench(ctx context.Context, row Row, tgt rowTarget, name string, threads, seconds int) (benchCell, Placement, error) {
	var pl Placement
	if r.hosts != nil {
		return r.benchHosts(ctx, row, tgt, name, threads, seconds)
	}
	limit := time.Duration(seconds+phaseGraceSeconds) * time.Second
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := r.runBench(pctx, row, tgt, name, []string{"-s", "--op", "GET", "-t", strconv.Itoa(threads),
		"-b", strconv.Itoa(r.batchOf(row)), "--runtime", strconv.Itoa(seconds)}, &pl)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return benchCell{}, pl, fmt.Errorf("orchestrator: the %d s GET phase at t=%d did not end within %v: the server stopped answering (see logs/)", seconds, threads, limit)
	}
	if err != nil {
		return benchCell{}, pl, err
	}
	for _, c := range out.Cells {
		if c.Threads == threads || len(out.Cells) == 1 {
			return c, pl, nil
		}
	}
	return benchCell{}, pl, fmt.Errorf("orchestrator: bench reported no cell for t=%d", threads)
}

// benchSpec is the client that runs `tierbench bench --json` with extra
// flags against the row's server, pinned as the row says.
func (r *runner) benchSpec(row Row, tgt rowTarget, name string, extra []string) clientSpec {
	args := append(r.benchArgs(tgt), extra...)
	if len(tgt.nodes) > 0 {
		args = append(args, "--cluster-bench")
	}
	spec := clientSpec{Name: name, Args: args,
		LogPath: filepath.Join(r.out, dirLogs, fmt.Sprintf("client-%s-%s-%s.log", row.Backend, row.Pin, name))}
	if row.Pin == PinPinned {
		spec.CPUs, spec.Mems = r.pinning.ClientCPUs, r.pinning.ClientMems
	}
	return spec
}

func (r *runner) runBench(ctx context.Context, row Row, tgt rowTarget, name string, extra []string, pl *Placement) (benchOutput, error) {
	stdout, got, err := r.drv.runClient(ctx, r.benchSpec(row, tgt, name, extra))
	if pl != nil {
		*pl = got
	}
	if err != nil {
		// A client that exits 1 after a short load still prints its JSON:
		// the counts are the evidence the refusal names.
		out, perr := parseBench(stdout)
		if perr == nil && out.Load != nil {
			return out, fmt.Errorf("%w: %w", errShortLoad, err)
		}
		return benchOutput{}, err
	}
	return parseBench(stdout)
}

// measure runs one pass of one cell with the server's device reads
// counted around it, and appends it to cells.jsonl.
func (r *runner) measure(ctx context.Context, row Row, tgt rowTarget, threads, pass int) error {
	r.cellIndex++
	left := r.progressLeft()
	r.printf("cell %d/%d: %s %s t=%d pass %d/%d%s%s\n", r.cellIndex, r.cellTotal, titleCase(row.Backend), row.Label, threads, pass, r.cfg.Passes, r.clientsNote(threads), left)
	start := time.Now()
	defer func() { r.cellTime += time.Since(start) }()
	rec, err := r.takePass(ctx, row, tgt, threads, pass)
	if err != nil {
		return err
	}
	if err := r.cells.append(rec); err != nil {
		return err
	}
	r.done[passKey(row, threads, pass)] = true

	note := ""
	switch {
	case rec.TooManyMiss:
		limit := "any miss keeps a cell out"
		if r.cfg.MaxMissRatio > 0 {
			limit = fmt.Sprintf("more than --max-miss-ratio %g allows", r.cfg.MaxMissRatio)
		}
		note = fmt.Sprintf("  [misses %s, %s: kept out of the table]", formatPercentBeside(rec.MissRatio, r.cfg.MaxMissRatio), limit)
	case rec.MemoryServed:
		note = fmt.Sprintf("  [%.0f device bytes per GET: memory-served, kept out of the table]", rec.ReadBytesPerGet)
	case rec.DeviceRead:
		note = fmt.Sprintf("  [%.1f device bytes per GET: not memory-bound, kept out of the table]", rec.ReadBytesPerGet)
	case rec.NoDeviceReads:
		note = fmt.Sprintf("  [%.2f device reads per GET: reads missed the device, kept out of the table]", rec.DeviceReadsPerGet)
	}
	if row.Backend == ScenarioLocalMemory {
		note = fmt.Sprintf(", %.2f device reads per GET (INFO store%s)", rec.DeviceReadsPerGet, shardReadsNote(rec.Nodes)) + note
	}
	r.printf("  %s ops/s, %.0f device bytes per GET%s%s\n", FormatOps(rec.OpsPerSec), rec.ReadBytesPerGet, evidenceLine(rec), note)
	return nil
}

// takePass runs one pass of one cell with the server's device reads and
// CPU counted around it, and judges it; it records nothing.
func (r *runner) takePass(ctx context.Context, row Row, tgt rowTarget, threads, pass int) (PassRecord, error) {
	rec := PassRecord{Kind: "pass", Schema: SchemaVersion, Row: row, Threads: threads, Pass: pass, Batch: r.batchOf(row), ReadBytes: -1}
	var before int64
	var err error
	if tgt.counted {
		if before, _, err = tgt.probe.evidence(ctx); err != nil {
			return rec, err
		}
	}
	pid := tgt.pid
	if _, remote := tgt.probe.(remoteProbe); remote {
		pid = 1 // the container's first process, read there
	}
	sample := r.sampleBefore(pid)
	counters, err := r.countersBefore(tgt)
	if err != nil {
		return rec, err
	}
	devBefore, err := r.deviceReads(ctx, row, tgt)
	if err != nil {
		return rec, err
	}
	cell, clientPl, err := r.bench(ctx, row, tgt, fmt.Sprintf("t%d-p%d", threads, pass), threads, r.cfg.CellSeconds)
	if err != nil {
		return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	if tgt.counted {
		after, pl, err := tgt.probe.evidence(ctx)
		if err != nil {
			return rec, err
		}
		rec.ReadBytes = after - before
		rec.Server = pl
		if tgt.srv != nil {
			want := tgt.srv.placement()
			rec.Server.WantCPUs, rec.Server.WantMems = want.WantCPUs, want.WantMems
			if rec.Server.Policy == "default" {
				rec.Server.Policy = want.Policy
			}
		}
	}
	rec.Client, rec.Clients = clientPl, cell.Clients
	var devAfter []int64
	if devBefore != nil {
		if devAfter, err = r.deviceReads(ctx, row, tgt); err != nil {
			return rec, err
		}
	}
	for _, check := range []struct {
		role string
		pl   Placement
	}{{"server", rec.Server}, {"client", rec.Client}} {
		if err := checkPlacement(check.role, check.pl); err != nil {
			return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
		}
	}
	rec.Ops, rec.Seconds, rec.OpsPerSec = cell.Ops, cell.Seconds, cell.OpsPerSec
	rec.Hits, rec.Misses, rec.Errors = cell.Hits, cell.Misses, cell.Errors
	rec.ClientCPUSeconds, rec.ClientSaturated, rec.Incomplete = cell.ClientCPUSeconds, cell.ClientSaturated, cell.Incomplete
	r.recordEvidence(sample, pid, &rec)
	if err := r.countersAfter(&rec, tgt, counters, cell); err != nil {
		return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	if devBefore != nil {
		deviceReadsDelta(&rec, devBefore, devAfter)
	}
	judgePass(&rec, r.cfg.MaxMissRatio)
	rec.Time = time.Now().UTC()
	return rec, nil
}

// judgePass fills the derived fields and the exclusion marks of a pass;
// maxMiss is the share of misses (and errors) a pass may have.
func judgePass(rec *PassRecord, maxMiss float64) {
	answered := rec.Hits + rec.Misses + rec.Errors
	if answered == 0 {
		answered = rec.Ops
	}
	if answered > 0 {
		rec.MissRatio = float64(rec.Misses+rec.Errors) / float64(answered)
	}
	rec.TooManyMiss = rec.MissRatio > maxMiss || rec.Ops == 0
	if isScenarioRow(rec.Row) {
		judgeScenario(rec)
		return
	}
	if rec.ReadBytes < 0 {
		rec.Unverified = true
		return
	}
	if rec.Ops > 0 {
		rec.ReadBytesPerGet = float64(rec.ReadBytes) / float64(rec.Ops)
	}
	rec.MemoryServed = rec.ReadBytesPerGet < minSectorShare*sectorBytes
}
