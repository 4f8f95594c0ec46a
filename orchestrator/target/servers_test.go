package target

import (
	"context"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// localEnv is a run on this machine as the targets see it: its driver,
// its password (none unless given), plain TCP on 127.0.0.1, no
// preflight where the server runs and no client hosts to check.
type localEnv struct {
	drv rig.Driver
	pw  Password
}

func (e localEnv) Printf(string, ...any)                      {}
func (e localEnv) Driver() rig.Driver                         { return e.drv }
func (e localEnv) Host() rig.ServerHost                       { return e.drv.Host() }
func (e localEnv) Password() Password                         { return e.pw }
func (e localEnv) Bind() string                               { return "127.0.0.1" }
func (e localEnv) ServerPort() (int, error)                   { return FreePort() }
func (e localEnv) Access(results.Row) rig.Access              { return rig.Access{Auth: e.pw.Auth} }
func (e localEnv) ServerTLSArgs(results.Row, int) []string    { return nil }
func (e localEnv) ClientTLSArgs(results.Row) []string         { return nil }
func (e localEnv) CheckNetwork(context.Context, Server) error { return nil }
func (e localEnv) ExternalReach() (Reach, error)              { return Reach{Words: ", plain TCP"}, nil }
func (e localEnv) Preflight(context.Context, results.Row, rig.ServerHandle, string, *Server) error {
	return nil
}

// TestTierbenchEntryIsTheRunsServer: the catalogue's tierbench entry
// starts tierbench's own server with the flags each scenario always gave
// it, and shards (ServerArgs) get the same.
func TestTierbenchEntryIsTheRunsServer(t *testing.T) {
	cfg, err := plan.Config{Workload: results.Workload{Binary: "/bin/tierbench"}}.Resolve(func(string) string { return "" }, []plan.Part{Servers{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	o := &Own{Config: cfg, Env: localEnv{drv: process.NewDriver(cfg.Binary, nil)}}
	d := cfg.DataDir
	sizes := []string{"--memory", "16m", "--page", "4m", "--segment", "1g", "--index", "256m"}
	for _, c := range []struct {
		row  results.Row
		want []string
	}{
		{results.Row{Backend: "libaio", Pin: plan.PinNone}, append(append([]string{"server", "--port", "7001", "--bind", "127.0.0.1"}, sizes...),
			"--storage-tier", "--logdir", d, "--device-type", "native", "--device-io-backend", "libaio")},
		{results.Row{Backend: "uring", Pin: plan.PinPinned}, append(append([]string{"server", "--port", "7001", "--bind", "127.0.0.1"}, sizes...),
			"--storage-tier", "--logdir", d, "--device-type", "native", "--device-io-backend", "uring")},
		{results.Row{Backend: results.ScenarioMemory, Pin: plan.PinNone}, []string{"server", "--port", "7001", "--bind", "127.0.0.1", "--index", "256m"}},
		{results.Row{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Batch: 256}, []string{"server", "--port", "7001", "--bind", "127.0.0.1", "--index", "256m",
			"--memory", "16m", "--page", "4m", "--segment", "1g", "--storage-tier", "--device-type", "localmemory", "--device-completion-threads", "4", "--device-throttle-limit", "512"}},
	} {
		l, err := o.serverLaunch(c.row, 7001)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.args, c.want) || l.prog != nil || l.ownDir != "" {
			t.Errorf("%s: got %q (program %q, a dir of its own %q),\nwant %q (the tierbench binary, writing the data dir %s)", c.row.ID(), l.args, l.prog, l.ownDir, c.want, d)
		}
		if got := l.commandOf(l.args); got != "/bin/tierbench "+sut.Quote(c.want) {
			t.Errorf("%s: command got %s", c.row.ID(), got)
		}
		if args, err := o.ServerArgs(c.row, 7001, d); err != nil || !slices.Equal(args, c.want) {
			t.Errorf("%s: ServerArgs got %q, %v; want %q", c.row.ID(), args, err, c.want)
		}
	}
}

// TestRowFileNamesApart: rows a run tells apart (results.Row.ID) write
// apart files; scenario 3's two -b rows once shared their client logs.
func TestRowFileNamesApart(t *testing.T) {
	rows := []results.Row{
		{Backend: "uring", Pin: "none"},
		{Backend: "uring", Pin: "pinned"},
		{Backend: "libaio", Pin: "none"},
		{Backend: "localmemory", Pin: "none", Batch: 1024},
		{Backend: "localmemory", Pin: "none", Batch: 256},
		{Backend: "localmemory", Pin: "none", Batch: 256, Shards: 2},
		{Backend: "memory", Pin: "none", Server: "redis"},
		{Backend: "memory", Pin: "none", Server: "valkey"},
		{Backend: "uring", Pin: "none", Memory: "16m"},
		{Backend: "uring", Pin: "none", Memory: "128m"},
		{Backend: "uring", Pin: "none", TLS: true},
		{Backend: "uring", Pin: "none", Ladder: true},
	}
	seen := map[string]results.Row{}
	for _, row := range rows {
		name := FileName(row)
		if other, ok := seen[name]; ok {
			t.Errorf("rows %s and %s: both named %q, want apart", other.ID(), row.ID(), name)
		}
		seen[name] = row
	}
	for _, tc := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Backend: "uring", Pin: "none"}, "uring-none"},
		{results.Row{Backend: "uring", Pin: "none", TLS: true}, "uring-none-tls"},
		{results.Row{Backend: "localmemory", Pin: "none", Batch: 256, Shards: 2}, "localmemory-none-b256-shards2"},
		{results.Row{Backend: "memory", Pin: "pinned", Server: "redis", Memory: "16m"}, "memory-pinned-redis-memory16m"},
		{results.Row{Backend: "memory", Pin: "none", Batch: 1024, Ladder: true}, "memory-none-b1024-ladder"},
	} {
		if got := FileName(tc.row); got != tc.want {
			t.Errorf("FileName(%s): got %q, want %q", tc.row.ID(), got, tc.want)
		}
	}
}
