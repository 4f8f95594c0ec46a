package orchestrator

import (
	"context"
	"slices"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/tlsrow"
	"github.com/tierbench/tierbench/results"
)

// targetSource gives every row its target: target.Own starts the run's
// servers afresh per row, target.External is the server or cluster at
// --server-addr, proven once before anything is created. What differs
// between them beyond the start is asked here, never by testing the
// configuration.
type targetSource interface {
	Start(ctx context.Context, row results.Row) (target.Server, error)
	// DataDirs are the data dirs its servers write on the server host.
	DataDirs() []string
	// DiskDir is where the servers' data lives, whose disks are the
	// passes' evidence; "" where not known.
	DiskDir() string
	// Started says the run starts the servers: tierbench's own checks
	// (O_DIRECT, the io_uring probe, disk space for segments) judge them,
	// pinning applies, and the layers below RESP can be run.
	Started() bool
}

// targetChoice is where the rows' servers come from, chosen once from
// the configuration (chooseTargets): the servers the run starts, or the
// one at --server-addr. What differs between the two before the first
// row is asked of it, never of the configuration.
type targetChoice interface {
	// fromBundle mends a configuration a bundle's plan.json recorded,
	// before --resume resolves it again.
	fromBundle(c *plan.Config)
	// rows plans the run's rows.
	rows(r *runner) ([]results.Row, error)
	// pick gives the source of the rows' targets, with what it needs
	// placed or proven before anything is created.
	pick(ctx context.Context, r *runner) (targetSource, error)
}

// chooseTargets is the one place --server-addr decides where the rows'
// servers come from.
func chooseTargets(c plan.Config) targetChoice {
	if c.ServerAddr != "" {
		return externalChoice{}
	}
	return ownChoice{}
}

// ownChoice is a run that starts its servers afresh per row.
type ownChoice struct{}

func (ownChoice) fromBundle(*plan.Config) {}

// pick places the pinned rows' servers on their CPUs, when the run has
// a pinned row, and gives the run's own servers.
func (ownChoice) pick(_ context.Context, r *runner) (targetSource, error) {
	if slices.Contains(r.cfg.Pins, plan.PinPinned) {
		p, err := r.local.topo.Pinned()
		if err != nil {
			return nil, err
		}
		r.local.pinning = p
	}
	return r.ownServers(), nil
}

// externalChoice is a run that measures the server at --server-addr.
type externalChoice struct{}

// fromBundle drops tierbench's server defaults, which bundles written
// before external runs recorded only what ran carry, and validate
// refuses.
func (externalChoice) fromBundle(c *plan.Config) {
	c.Backends, c.Pins, c.Memory, c.Page, c.Segment, c.Index = nil, nil, "", "", "", ""
}

// rows is the one row of the server at --server-addr.
func (externalChoice) rows(r *runner) ([]results.Row, error) {
	return []results.Row{{Backend: "external", Pin: plan.PinNone, Label: "no pin (" + r.cfg.ServerAddr + ")"}}, nil
}

// pick proves the server at --server-addr now.
func (externalChoice) pick(ctx context.Context, r *runner) (targetSource, error) {
	return r.attachExternal(ctx)
}

// ownServers is the source of the servers the run starts. It holds the
// run's values as they are once the targets are picked; what comes later
// (the driver, the password, the server's address) it asks targetEnv.
func (r *runner) ownServers() *target.Own {
	return &target.Own{Config: r.cfg, Out: r.out, Topo: r.local.topo, Pinning: r.local.pinning, Env: targetEnv{r}}
}

// attachExternal proves the server at --server-addr (target.Attach),
// which sets r.cfg's ServerPID, then asks every registered part what it
// says of the server found: a refusal, or a default it turns off in
// r.cfg, said at once.
func (r *runner) attachExternal(ctx context.Context) (*target.External, error) {
	ext, err := target.Attach(ctx, &r.cfg, r.local.proc, targetEnv{r})
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		c, ok := p.(plan.AttachChecker)
		if !ok {
			continue
		}
		note, err := c.CheckAttached(&r.cfg, ext.Attached())
		if err != nil {
			return nil, err
		}
		if note != "" {
			r.printf("%s\n", note)
		}
	}
	return ext, nil
}

// protectLocalServers gives the servers the run starts on this machine a
// password made for the run (target.ProtectLocalServers); across hosts
// pickHosts makes it instead, and a server at --server-addr has its own.
func (r *runner) protectLocalServers() error {
	if r.auth != "" || r.cfg.HostsMode() || !r.targets.Started() {
		return nil
	}
	s := r.secrets()
	p, err := target.ProtectLocalServers(r.cfg, r.drv, &s, r.printf)
	r.secretDir = s.Dir
	if err != nil {
		return err
	}
	r.auth, r.authFile, r.passFiles = p.Auth, p.File, p.Files
	return nil
}

// secrets is the run's secret dir as target writes it; whoever writes
// through it keeps its Dir in r.secretDir, which the run removes at the
// end.
func (r *runner) secrets() target.Secrets {
	return target.Secrets{StateDir: r.cfg.StateDir, RunID: r.plan.RunID, Dir: r.secretDir}
}

// writePasswordFile writes auth into the run's password file
// (target.Secrets.WritePassword) and returns its name.
func (r *runner) writePasswordFile(auth string) (string, error) {
	s := r.secrets()
	file, err := s.WritePassword(auth)
	r.secretDir = s.Dir
	return file, err
}

// targetEnv is the run as the targets see it (target.Env).
type targetEnv struct{ r *runner }

var _ target.Env = targetEnv{}

func (e targetEnv) Printf(format string, a ...any) { e.r.printf(format, a...) }
func (e targetEnv) Driver() rig.Driver             { return e.r.drv }
func (e targetEnv) Host() rig.ServerHost           { return e.r.host }
func (e targetEnv) Bind() string                   { return e.r.bindAddr() }
func (e targetEnv) ServerPort() (int, error)       { return e.r.serverPort() }

func (e targetEnv) Password() target.Password {
	return target.Password{Auth: e.r.auth, File: e.r.authFile, Files: e.r.passFiles}
}

func (e targetEnv) Access(row results.Row) rig.Access { return e.r.rowAccess(row) }

func (e targetEnv) ServerTLSArgs(row results.Row, port int) []string {
	return e.r.tlsServerArgs(row, port)
}

func (e targetEnv) ClientTLSArgs(row results.Row) []string { return e.r.tlsClientArgs(row) }

func (e targetEnv) Preflight(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string, tgt *target.Server) error {
	return preflight.Server(ctx, e.r.preflightEnv(), row, srv, dataDir, tgt)
}

func (e targetEnv) CheckNetwork(ctx context.Context, tgt target.Server) error {
	return e.r.clients.CheckNetwork(ctx, tgt)
}

// ExternalReach keeps the secret dir the clients' password file went to,
// for the run to remove at the end.
func (e targetEnv) ExternalReach() (target.Reach, error) {
	acc, args, dir, err := e.r.externalAccess()
	if err != nil {
		return target.Reach{}, err
	}
	e.r.secretDir = dir
	return target.Reach{Access: acc, ClientArgs: args, Words: tlsrow.ExternalWords(e.r.cfg)}, nil
}
