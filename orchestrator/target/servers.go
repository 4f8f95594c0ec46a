package target

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/orchestrator/sweep"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// The servers a run measures side by side (--server, --server-cmd): each
// an entry of package sut's catalogue, read as data. The run has no
// branch of its own for any of them.

// Servers is --server, --server-cmd, --server-bin and --server-image:
// the servers measured side by side, a dimension of the registry.
type Servers struct{}

// Name names the dimension in the combination table.
func (Servers) Name() string { return "servers" }

// Supports refuses what validateServers refuses.
func (Servers) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateServers(c, bad) })
}

// imageEnsurer is a driver that runs servers from images on an engine
// (docker.Driver): it makes sure one is there, pulling it only when asked.
type imageEnsurer interface {
	EnsureImage(ctx context.Context, ref string, pull bool) error
}

// Prepare makes ready, once the run's driver is open and before the
// first row, the images the plan's servers run from (plan.Needs.Images:
// --server-image), on drv's engine; pulled only with --pull. A driver
// that runs no images (the process runtime, also where auto fell back to
// it) has none to prepare.
func (Servers) Prepare(ctx context.Context, c plan.Config, drv rig.Driver) error {
	e, ok := drv.(imageEnsurer)
	if !ok {
		return nil
	}
	for _, img := range plan.NeedsOf(c, 0).Images {
		if err := e.EnsureImage(ctx, img, c.Pull); err != nil {
			return err
		}
	}
	return nil
}

// Flags is how a command line asks for it, in the combination table.
func (Servers) Flags() string { return "--server redis --scenario memory" }

// Ask sets what Flags says on c.
func (Servers) Ask(c *plan.Config) {
	c.Servers, c.Scenario = []string{"redis"}, results.ScenarioMemory
}

// validateServers checks --server, --server-cmd, --server-bin,
// --server-image and --pull against each other and the rest of the run.
func validateServers(c plan.Config, bad func(string, ...any)) {
	if !c.NamesServers() && c.ServerBin == "" && c.ServerImage == "" && !c.Pull {
		return
	}
	if c.ServerAddr != "" {
		bad("--server, --server-cmd, --server-bin, --server-image and --pull start servers; --server-addr measures one already running: give one or the other")
		return
	}
	servers, err := c.Systems()
	if err != nil {
		bad("%v", strings.TrimPrefix(err.Error(), "sut: "))
		return
	}
	scenarios := []string{c.ScenarioName()}
	if c.ScenarioName() == results.ScenarioAll {
		scenarios = results.Scenarios
	}
	for _, s := range servers {
		for _, sc := range scenarios {
			if err := s.Supports(sc); err != nil {
				bad("%v", strings.TrimPrefix(err.Error(), "sut: "))
			}
		}
	}
	others := plan.Foreign(servers)
	names := make([]string, len(others))
	for i, s := range others {
		names[i] = s.Name
	}
	one := func(flag string) {
		switch {
		case len(others) == 0:
			bad("%s applies to a server besides tierbench's own (tierbench's binary is --binary): name one with --server", flag)
		case len(others) > 1:
			bad("%s names the program of one server; this run starts %s: run them one per run, or leave %s out to find each on PATH", flag, strings.Join(names, ", "), flag)
		}
	}
	if c.ServerBin != "" {
		one("--server-bin")
		if c.ServerCmd != "" {
			bad("--server-bin with --server-cmd: the template's first word is its program")
		}
	}
	if c.ServerImage != "" {
		one("--server-image")
		if c.ProcessesOnly() {
			bad("--server-image runs the server under Docker; --runtime process starts programs (give --server-bin, or --runtime docker)")
		}
	} else if len(others) > 0 && c.ContainersOnly() {
		bad("--runtime docker starts %s from an image: give --server-image (%s), or --runtime process", names[0], imageHint(others[0]))
	}
	if c.Pull && c.ServerImage == "" {
		bad("--pull pulls the image of --server-image: give one")
	}
	if len(others) == 0 {
		return
	}
	if c.MaxShards() > 1 {
		bad("--shards starts tierbench's own servers as a cluster; --server %s is one server: leave --shards out", names[0])
	}
	if c.HostsMode() {
		bad("--server %s across hosts is not supported yet: --server-host and --client-hosts start tierbench's own server", names[0])
	}
	checkPrograms(c, others, bad)
}

// imageHint names the image a catalogue entry is published as.
func imageHint(s sut.Server) string {
	if s.Image == "" {
		return "an image holding " + s.Programs[0].Binary
	}
	return "e.g. " + s.Image
}

// checkPrograms refuses, before anything starts, a foreign server the
// process runtime would start whose program is not there.
func checkPrograms(c plan.Config, others []sut.Server, bad func(string, ...any)) {
	if c.ServerImage != "" {
		return // it runs from the image
	}
	for _, s := range others {
		prog, err := s.Program(c.ServerBin)
		if err != nil {
			bad("%v", strings.TrimPrefix(err.Error(), "sut: "))
			continue
		}
		if _, err := exec.LookPath(prog[0]); err != nil {
			bad("--server %s: %s is not there (%v): install it, give --server-bin, or run it under --runtime docker with --server-image", s.Name, prog[0], err)
		}
		if len(prog) > 1 {
			if _, err := os.Stat(prog[len(prog)-1]); err != nil {
				bad("--server-bin %s: %v", prog[len(prog)-1], err)
			}
		}
	}
}

// rowScenario is the scenario whose set-up a row's server runs: the
// row's backend when that names a scenario with a backend of its own
// (memory, localmemory), else storage.
func rowScenario(row results.Row) string {
	if s, ok := plan.ScenarioSpecs[row.Backend]; ok && s.OwnBackend {
		return row.Backend
	}
	return results.ScenarioStorage
}

// RowServer is the catalogue entry of a row's server.
func RowServer(c plan.Config, row results.Row) (sut.Server, error) {
	servers, err := c.Systems()
	if err != nil {
		return sut.Server{}, err
	}
	for _, s := range servers {
		if s.Name == row.ServerName() {
			return s, nil
		}
	}
	return sut.Server{}, fmt.Errorf("target: row %s names server %q, which the run does not start", row.ID(), row.ServerName())
}

// launch is how a row's server starts: the program before its flags
// (nil: the tierbench binary) for a process, or the image (zero: the run's
// tierbench image) for a container; its flags; the directory of the data
// dir made for a foreign server alone (safe.ServerDir; "" for tierbench,
// which writes the data dir itself); and the words the recorded command
// puts before the flags (head).
type launch struct {
	prog   []string
	img    rig.ImageRun
	args   []string
	ownDir string
	// head is what the command line has before the flags: the program,
	// or "docker run --entrypoint EP IMAGE".
	head []string
	// auth: the server takes the run's password (its file is in args).
	auth bool
}

// commandOf is the command line that runs the server with the flags
// args, quoted as a shell reads it, for the bundle. args are the ones the
// runtime is given, the password file's and the TLS files' paths among
// them: what ran, never a secret itself (those stay in the files).
func (l launch) commandOf(args []string) string {
	return sut.Quote(append(slices.Clone(l.head), args...))
}

// serverLaunch is how row's server starts on port with the run's data
// dir: its catalogue entry's flags for the row's scenario, filled in.
func (o *Own) serverLaunch(row results.Row, port int) (launch, error) {
	cfg, drv := o.Config, o.Env.Driver()
	s, err := RowServer(cfg, row)
	if err != nil {
		return launch{}, err
	}
	var l launch
	data := drv.DataPath(cfg.DataDir)
	if !s.Self {
		if l.ownDir, err = safe.ServerDir(cfg.DataDir, s.Name); err != nil {
			return launch{}, err
		}
		data = filepath.Join(data, filepath.Base(l.ownDir))
	}
	v := o.serverValues(row, port, data)
	v.PasswordFile = o.Env.Password().fileOf(s)
	sc := rowScenario(row)
	switch {
	case s.Self:
		l.args, err = s.Process(sc, nil, v)
		l.args = append(l.args, sweep.ReadCacheArgs(cfg, row)...)
		l.head = []string{cfg.Binary}
	case drv.Capabilities().Images:
		var ep []string
		ep, l.args, err = s.Container(sc, v)
		l.img = rig.ImageRun{Name: cfg.ServerImage, Entrypoint: ep}
		if err == nil {
			l.head = []string{"docker", "run", "--entrypoint", ep[0], cfg.ServerImage}
		}
	default:
		if l.prog, err = s.Program(cfg.ServerBin); err == nil {
			l.args, err = s.Process(sc, nil, v)
			l.head = l.prog
		}
	}
	if err != nil {
		return launch{}, fmt.Errorf("target: %s %s: %w", row.ServerName(), row.Label, err)
	}
	// The password file's path is in args, so in the recorded command
	// (commandOf), as it ran; the password is only in the file.
	l.args, l.auth = o.Env.Password().serverPassword(s, l.args)
	return l, nil
}

// serverValues are what a row's server's template is filled with: data
// is its data dir as it sees it.
func (o *Own) serverValues(row results.Row, port int, data string) sut.Values {
	c := o.Config
	return sut.Values{Port: port, Bind: o.Env.Bind(), Data: data, Memory: sweep.RowMemory(c, row), Page: c.Page,
		Segment: c.Segment, Index: c.Index, Backend: row.Backend}
}

// ServerEvidence reads the INFO fields the row's server's catalogue entry
// names ("section:field") through p; a field the server does not report
// is left out, and a section it refuses leaves out its fields.
func ServerEvidence(ctx context.Context, c plan.Config, row results.Row, p rig.ServerProbe) map[string]string {
	s, err := RowServer(c, row)
	if err != nil || len(s.Evidence) == 0 {
		return nil
	}
	sections := map[string]map[string]string{}
	out := map[string]string{}
	for _, ev := range s.Evidence {
		section, field, ok := strings.Cut(ev, ":")
		if !ok {
			continue
		}
		info, seen := sections[section]
		if !seen {
			info, _ = rig.ProbeInfo(ctx, p, section)
			sections[section] = info
		}
		if v, ok := info[field]; ok {
			out[ev] = v
		}
	}
	return out
}

// FileName names a row's files, its server's log and container and its
// clients' logs, after its ID (results.Row.ID), which tells the rows of a
// run apart: "uring/none/b=256/server=redis/tls" is
// "uring-none-b256-redis-tls". Backend and pin alone were not enough:
// scenario 3's -b 1024 and -b 256 rows, a sweep's --memory rows and
// --tls both's plain and TLS rows wrote over each other's client logs.
func FileName(row results.Row) string {
	return fileNameOfID.Replace(row.ID())
}

var fileNameOfID = strings.NewReplacer("/", "-", "server=", "", "=", "")

// rowTitle names a row's server set-up in progress lines.
func rowTitle(row results.Row) string {
	if row.Server == "" {
		return human.Title(row.Backend)
	}
	return row.Server + " " + human.Title(row.Backend)
}
