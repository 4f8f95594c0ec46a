package orchestrator

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// TestServersConfig: --server and its companions resolve to the servers
// the catalogue names, or are refused (exit 2) with a sentence that says
// why and what to do.
func TestServersConfig(t *testing.T) {
	none := func(string) string { return "" }
	mem := func(c plan.Config) plan.Config { c.Scenario = "memory"; return c }
	for _, c := range []struct {
		cfg  plan.Config
		want string // "" resolves
	}{
		{mem(plan.Config{Servers: []string{"tierbench", "redis"}}), ""},
		{mem(plan.Config{Servers: []string{"redis"}, ServerBin: "/usr/bin/redis-server", Runtime: plan.RuntimeProcess}), ""},
		{mem(plan.Config{Servers: []string{"redis"}, ServerImage: "tierbench-test-redis:x", Runtime: plan.RuntimeDocker, Pull: true}), ""},
		{plan.Config{Servers: []string{"garnet"}, ServerImage: "ghcr.io/microsoft/garnet", Runtime: plan.RuntimeDocker}, ""},
		{plan.Config{ServerCmd: "redis-server --port {port} --dir {data}"}, ""},
		// Garnet cannot be installed on these machines: nothing to start.
		{plan.Config{Servers: []string{"garnet"}}, "--server garnet: GarnetServer is not on PATH: give --server-bin (…/GarnetServer or …/GarnetServer.dll, run by dotnet), or run it under --runtime docker --server-image ghcr.io/microsoft/garnet"},
		{plan.Config{Servers: []string{"garnet"}, ServerBin: "/opt/garnet/GarnetServer.dll"}, "--server garnet: dotnet is not there"},
		{mem(plan.Config{ServerCmd: "no-such-server --port {port}"}), `--server-cmd: its program no-such-server: exec: "no-such-server": executable file not found in $PATH`},
		{plan.Config{Servers: []string{"redis"}}, "--server redis cannot run --scenario storage: Redis keeps every key in RAM and has no tier"},
		{plan.Config{Scenario: "all", Servers: []string{"valkey"}}, "--server valkey cannot run --scenario storage"},
		{mem(plan.Config{Servers: []string{"memcached"}}), `unknown --server "memcached" (want one of tierbench, garnet, redis, valkey, keydb, dragonfly`},
		{mem(plan.Config{Servers: []string{"redis", "redis"}}), "--server names redis twice"},
		{mem(plan.Config{ServerCmd: "my-srv --dir {data}"}), "has no {port}"},
		{mem(plan.Config{ServerCmd: "my-srv --port {prot}"}), "unknown placeholder {prot}"},
		{mem(plan.Config{Servers: []string{"redis"}, ServerAddr: "127.0.0.1:6379"}), "--server-addr measures one already running: give one or the other"},
		{mem(plan.Config{Servers: []string{"redis", "valkey"}, ServerBin: "/x/redis-server"}), "--server-bin names the program of one server; this run starts redis, valkey"},
		{mem(plan.Config{ServerBin: "/x/tierbench"}), "--server-bin applies to a server besides tierbench's own (tierbench's binary is --binary)"},
		{mem(plan.Config{ServerCmd: "srv --port {port}", ServerBin: "/x/srv"}), "the template's first word is its program"},
		{mem(plan.Config{Servers: []string{"redis"}, ServerImage: "redis", Runtime: plan.RuntimeProcess}), "--server-image runs the server under Docker; --runtime process starts programs"},
		{mem(plan.Config{Servers: []string{"redis"}, Runtime: plan.RuntimeDocker}), "--runtime docker starts redis from an image: give --server-image (e.g. redis), or --runtime process"},
		{mem(plan.Config{Servers: []string{"redis"}, Pull: true}), "--pull pulls the image of --server-image: give one"},
		{plan.Config{Servers: []string{"garnet"}, Shards: []int{2}}, "--shards starts tierbench's own servers as a cluster; --server garnet is one server"},
		{mem(plan.Config{Servers: []string{"redis"}, Ladder: true, Given: []string{"ladder"}}), "--ladder measures tierbench's own layers below RESP"},
	} {
		got, err := c.cfg.Resolve(none, parts)
		if c.want == "" {
			if err != nil {
				t.Errorf("resolve(%+v): %v", c.cfg, err)
			}
			if _, serr := got.Systems(); serr != nil {
				t.Errorf("systems(%+v): %v", c.cfg, serr)
			}
			continue
		}
		if err == nil || !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resolve(%+v): got %v,\nwant an ErrConfig containing %q", c.cfg, err, c.want)
		}
	}
}

// TestReferenceLadderOffForForeignServers: the reference profile's ladder
// (tierbench's own layers) turns off with a server besides tierbench, and
// the run says so.
func TestReferenceLadderOffForForeignServers(t *testing.T) {
	cfg, err := plan.Config{Profile: plan.ProfileReference, Scenario: "memory", Servers: []string{"tierbench", "redis"}}.Resolve(func(string) string { return "" }, parts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ladder || len(cfg.Notes) == 0 || !strings.Contains(strings.Join(cfg.Notes, "\n"), "ladder: off with --server redis") {
		t.Errorf("got ladder %v, notes %q; want off, and said", cfg.Ladder, cfg.Notes)
	}
}

// TestTierbenchEntryIsTheRunsServer: the catalogue's tierbench entry
// starts tierbench's own server with the flags each scenario always gave
// it, and shards (serverArgs) get the same.
func TestTierbenchEntryIsTheRunsServer(t *testing.T) {
	cfg, err := plan.Config{Binary: "/bin/tierbench"}.Resolve(func(string) string { return "" }, parts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	r := &runner{cfg: cfg, drv: process.NewDriver(cfg.Binary, nil)}
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
		l, err := r.serverLaunch(c.row, 7001)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.args, c.want) || l.prog != nil || l.dataDir != d {
			t.Errorf("%s: got %q (program %q, data %s),\nwant %q (the tierbench binary, data %s)", c.row.ID(), l.args, l.prog, l.dataDir, c.want, d)
		}
		if got := l.commandOf(l.args); got != "/bin/tierbench "+sut.Quote(c.want) {
			t.Errorf("%s: command got %s", c.row.ID(), got)
		}
		if args, err := r.serverArgs(c.row, 7001, d); err != nil || !slices.Equal(args, c.want) {
			t.Errorf("%s: serverArgs got %q, %v; want %q", c.row.ID(), args, err, c.want)
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
		name := rowFileName(row)
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
		if got := rowFileName(tc.row); got != tc.want {
			t.Errorf("rowFileName(%s): got %q, want %q", tc.row.ID(), got, tc.want)
		}
	}
}
