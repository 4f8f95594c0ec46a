package ladder

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestPartSupports: the ladder refuses, in its own words, a server host
// always and, when asked for, another server, TLS and a memory-tier
// sweep; anything else, or a run without the ladder, it supports.
func TestPartSupports(t *testing.T) {
	asked := []string{"ladder"}
	for _, tt := range []struct {
		name string
		cfg  plan.Config
		want []string // each refusal, in order; none: supported
	}{
		{"no ladder", plan.Config{Workload: results.Workload{ServerHost: "srv=tcp://127.0.0.1:1", TLS: "on", Memory: "1g,2g"}}, nil},
		{"one machine", plan.Config{Workload: results.Workload{Ladder: true, Given: asked}}, nil},
		{"a server host", plan.Config{Workload: results.Workload{Ladder: true, ServerHost: "srv=tcp://127.0.0.1:1"}},
			[]string{"--ladder with --server-host is not supported: its fio, device and kv layers run on this machine, not the server host; leave --ladder out"}},
		{"another server", plan.Config{Workload: results.Workload{Ladder: true, Given: asked, Servers: []string{"redis"}}},
			[]string{"--ladder measures tierbench's own layers below RESP; with --server redis leave --ladder out"}},
		{"tls on", plan.Config{Workload: results.Workload{Ladder: true, Given: asked, TLS: "on"}},
			[]string{"--tls on with --ladder is not supported: the ladder's top server is plain TCP; leave --ladder out"}},
		{"tls both", plan.Config{Workload: results.Workload{Ladder: true, Given: asked, TLS: "both"}},
			[]string{"--tls both with --ladder is not supported: the ladder's top server is plain TCP; leave --ladder out"}},
		{"tls off", plan.Config{Workload: results.Workload{Ladder: true, Given: asked, TLS: "off"}}, nil},
		{"a memory sweep", plan.Config{Workload: results.Workload{Ladder: true, Given: asked, Memory: "1g,2g"}},
			[]string{"--memory 1g,2g (a memory-tier sweep) with --ladder is not supported: the ladder measures one memory size; leave --ladder out (--ladder=false with --profile reference)"}},
		{"the profile's, not asked for", plan.Config{Workload: results.Workload{
			Ladder:  true,
			Servers: []string{"redis"},
			TLS:     "on",
			Memory:  "1g,2g",
		},
		}, nil},
		// The server at --server-addr is not the run's: the other
		// flags' own checks refuse what applies there.
		{"an external server", plan.Config{Workload: results.Workload{
			Ladder:     true,
			Given:      asked,
			ServerAddr: "127.0.0.1:6379",
			TLS:        "on",
		},
		}, nil},
	} {
		err := Part{}.Supports(tt.cfg)
		var got []string
		if err != nil {
			got = strings.Split(err.Error(), "\n")
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestPartAdjust: the profile's ladder, not asked for, is turned off
// where Supports would refuse it, with the first reason noted; one asked
// for is left to be refused.
func TestPartAdjust(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cfg    plan.Config
		ladder bool
		note   string
	}{
		{"one machine", plan.Config{Workload: results.Workload{Ladder: true}}, true, ""},
		{"across hosts", plan.Config{Workload: results.Workload{Ladder: true, ServerHost: "srv=tcp://127.0.0.1:1", Servers: []string{"redis"}}}, false,
			"ladder: off across hosts (its layers would run on this machine, not the server host)"},
		{"another server", plan.Config{Workload: results.Workload{Ladder: true, Servers: []string{"redis"}, TLS: "on"}}, false,
			"ladder: off with --server redis (its layers are tierbench's own)"},
		{"a memory sweep", plan.Config{Workload: results.Workload{Ladder: true, Memory: "1g,2g", TLS: "on"}}, false,
			"ladder: off in a memory-tier sweep (its layers measure one --memory)"},
		{"tls", plan.Config{Workload: results.Workload{Ladder: true, TLS: "both"}}, false, "ladder: off with --tls (its top server is plain TCP)"},
		{"tls at an external server", plan.Config{Workload: results.Workload{Ladder: true, TLS: "on", ServerAddr: "127.0.0.1:6379"}}, true, ""},
		{"asked for", plan.Config{Workload: results.Workload{Ladder: true, Given: []string{"ladder"}, TLS: "on"}}, true, ""},
	} {
		c := tt.cfg
		Part{}.Adjust(&c)
		if c.Ladder != tt.ladder || strings.Join(c.Notes, "\n") != tt.note {
			t.Errorf("%s: got ladder %v, notes %q; want %v, %q", tt.name, c.Ladder, c.Notes, tt.ladder, tt.note)
		}
	}
}
