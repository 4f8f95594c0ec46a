package orchestrator

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
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
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"tierbench", "redis"}}}), ""},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, ServerBin: "/usr/bin/redis-server", Runtime: plan.RuntimeProcess}}), ""},
		{mem(plan.Config{Workload: results.Workload{
			Servers:     []string{"redis"},
			ServerImage: "tierbench-test-redis:x",
			Runtime:     plan.RuntimeDocker,
			Pull:        true,
		},
		}), ""},
		{plan.Config{Workload: results.Workload{Servers: []string{"garnet"}, ServerImage: "ghcr.io/microsoft/garnet", Runtime: plan.RuntimeDocker}}, ""},
		{plan.Config{Workload: results.Workload{ServerCmd: "redis-server --port {port} --dir {data}"}}, ""},
		// Garnet cannot be installed on these machines: nothing to start.
		{plan.Config{Workload: results.Workload{Servers: []string{"garnet"}}}, "--server garnet: GarnetServer is not on PATH: give --server-bin (…/GarnetServer or …/GarnetServer.dll, run by dotnet), or run it under --runtime docker --server-image ghcr.io/microsoft/garnet"},
		{plan.Config{Workload: results.Workload{Servers: []string{"garnet"}, ServerBin: "/opt/garnet/GarnetServer.dll"}}, "--server garnet: dotnet is not there"},
		{mem(plan.Config{Workload: results.Workload{ServerCmd: "no-such-server --port {port}"}}), `--server-cmd: its program no-such-server: exec: "no-such-server": executable file not found in $PATH`},
		{plan.Config{Workload: results.Workload{Servers: []string{"redis"}}}, "--server redis cannot run --scenario storage: Redis keeps every key in RAM and has no tier"},
		{plan.Config{Workload: results.Workload{Scenario: "all", Servers: []string{"valkey"}}}, "--server valkey cannot run --scenario storage"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"memcached"}}}), `unknown --server "memcached" (want one of tierbench, garnet, redis, valkey, keydb, dragonfly`},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis", "redis"}}}), "--server names redis twice"},
		{mem(plan.Config{Workload: results.Workload{ServerCmd: "my-srv --dir {data}"}}), "has no {port}"},
		{mem(plan.Config{Workload: results.Workload{ServerCmd: "my-srv --port {prot}"}}), "unknown placeholder {prot}"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, ServerAddr: "127.0.0.1:6379"}}), "--server-addr measures one already running: give one or the other"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis", "valkey"}, ServerBin: "/x/redis-server"}}), "--server-bin names the program of one server; this run starts redis, valkey"},
		{mem(plan.Config{Workload: results.Workload{ServerBin: "/x/tierbench"}}), "--server-bin applies to a server besides tierbench's own (tierbench's binary is --binary)"},
		{mem(plan.Config{Workload: results.Workload{ServerCmd: "srv --port {port}", ServerBin: "/x/srv"}}), "the template's first word is its program"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, ServerImage: "redis", Runtime: plan.RuntimeProcess}}), "--server-image runs the server under Docker; --runtime process starts programs"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, Runtime: plan.RuntimeDocker}}), "--runtime docker starts redis from an image: give --server-image (e.g. redis), or --runtime process"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, Pull: true}}), "--pull pulls the image of --server-image: give one"},
		{plan.Config{Workload: results.Workload{Servers: []string{"garnet"}, Shards: []int{2}}}, "--shards starts tierbench's own servers as a cluster; --server garnet is one server"},
		{mem(plan.Config{Workload: results.Workload{Servers: []string{"redis"}, Ladder: true, Given: []string{"ladder"}}}), "--ladder measures tierbench's own layers below RESP"},
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
	cfg, err := plan.Config{Workload: results.Workload{Profile: plan.ProfileReference, Scenario: "memory", Servers: []string{"tierbench", "redis"}}}.Resolve(func(string) string { return "" }, parts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ladder || len(cfg.Notes) == 0 || !strings.Contains(strings.Join(cfg.Notes, "\n"), "ladder: off with --server redis") {
		t.Errorf("got ladder %v, notes %q; want off, and said", cfg.Ladder, cfg.Notes)
	}
}
