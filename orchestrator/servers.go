package orchestrator

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// The servers a run measures side by side (--server, --server-cmd): each
// an entry of package sut's catalogue, read as data. The run has no
// branch of its own for any of them.

// systems are the run's servers: --server's in order, then --server-cmd's;
// tierbench's own alone when neither is given.
func (c Config) systems() ([]sut.Server, error) {
	var out []sut.Server
	if len(c.Servers) > 0 {
		s, err := sut.LookupList(strings.Join(c.Servers, ","))
		if err != nil {
			return nil, err
		}
		out = s
	}
	if c.ServerCmd != "" {
		s, err := sut.Custom(c.ServerCmd)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		own, _ := sut.Lookup(results.OwnServer)
		out = []sut.Server{own}
	}
	return out, nil
}

// foreign are the run's servers other than tierbench's own.
func foreign(servers []sut.Server) []sut.Server {
	var out []sut.Server
	for _, s := range servers {
		if !s.Self {
			out = append(out, s)
		}
	}
	return out
}

// namesServers says whether the run names its servers (--server or
// --server-cmd), so its rows carry the server's name.
func (c Config) namesServers() bool { return len(c.Servers) > 0 || c.ServerCmd != "" }

// validateServers checks --server, --server-cmd, --server-bin,
// --server-image and --pull against each other and the rest of the run.
func (c Config) validateServers(bad func(string, ...any)) {
	if !c.namesServers() && c.ServerBin == "" && c.ServerImage == "" && !c.Pull {
		return
	}
	if c.ServerAddr != "" {
		bad("--server, --server-cmd, --server-bin, --server-image and --pull start servers; --server-addr measures one already running: give one or the other")
		return
	}
	servers, err := c.systems()
	if err != nil {
		bad("%v", strings.TrimPrefix(err.Error(), "sut: "))
		return
	}
	scenarios := []string{c.scenario()}
	if c.scenario() == results.ScenarioAll {
		scenarios = results.Scenarios
	}
	for _, s := range servers {
		for _, sc := range scenarios {
			if err := s.Supports(sc); err != nil {
				bad("%v", strings.TrimPrefix(err.Error(), "sut: "))
			}
		}
	}
	others := foreign(servers)
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
		if c.Runtime == RuntimeProcess {
			bad("--server-image runs the server under Docker; --runtime process starts programs (give --server-bin, or --runtime docker)")
		}
	} else if len(others) > 0 && c.Runtime == RuntimeDocker {
		bad("--runtime docker starts %s from an image: give --server-image (%s), or --runtime process", names[0], imageHint(others[0]))
	}
	if c.Pull && c.ServerImage == "" {
		bad("--pull pulls the image of --server-image: give one")
	}
	if len(others) == 0 {
		return
	}
	if c.maxShards() > 1 {
		bad("--shards starts tierbench's own servers as a cluster; --server %s is one server: leave --shards out", names[0])
	}
	if c.hostsMode() {
		bad("--server %s across hosts is not supported yet: --server-host and --client-hosts start tierbench's own server", names[0])
	}
	if c.Ladder && c.given("ladder") {
		bad("--ladder measures tierbench's own layers below RESP; with --server %s leave --ladder out", names[0])
	}
}

// imageHint names the image a catalogue entry is published as.
func imageHint(s sut.Server) string {
	if s.Image == "" {
		return "an image holding " + s.Programs[0].Binary
	}
	return "e.g. " + s.Image
}

// serverNote is what resolve says when it turns a profile's extra off
// for foreign servers.
func (c *Config) dropExtrasForServers() {
	servers, err := c.systems()
	if err != nil || len(foreign(servers)) == 0 {
		return
	}
	if c.Ladder && !c.given("ladder") {
		c.Ladder = false
		c.notes = append(c.notes, fmt.Sprintf("ladder: off with --server %s (its layers are tierbench's own)", foreign(servers)[0].Name))
	}
}
