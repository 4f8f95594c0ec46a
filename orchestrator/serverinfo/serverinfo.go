// Package serverinfo keeps, after each row's passes, the whole INFO every
// node of the row's server answered, in the bundle's server-info.jsonl
// (run --server-info): the server's own account of the row — its version
// and configuration as it runs them, its counters after the cells —
// beyond the few fields the load record keeps. A reader of a bundle can
// then check what the server said of itself without the server.
//
// It is a row step of the facade's registry: it runs on the row's server
// after the passes, says its work for the estimate and, for --resume,
// whether the bundle still lacks a row's snapshot.
package serverinfo

import (
	"context"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// File is the bundle's file of snapshots, one JSON line per node and row.
const File = "server-info.jsonl"

// Phase names the step in progress lines and status.json.
const Phase = "server info"

// Env is what the step needs of the run, for one row.
type Env interface {
	Config() plan.Config
	// Bundle is the results bundle's directory.
	Bundle() string
	Printf(format string, a ...any)
	// Target is where the row's server answers (empty before it starts).
	Target() target.Server
}

// Record is one node's INFO after one row's passes.
type Record struct {
	Kind string      `json:"kind"` // "server-info"
	Row  results.Row `json:"row"`
	Addr string      `json:"addr"`
	Time time.Time   `json:"time"`
	// Info is the reply to INFO everything, as the server sent it.
	Info string `json:"info"`
}

// Work is the step's work after one row, for the run's estimate: one
// INFO per row, about a second; none without --server-info.
func Work(c plan.Config, _ []results.Row, _ bool) (count int, seconds float64, upTo bool) {
	if !c.ServerInfo {
		return 0, 0, false
	}
	return 1, 1, false
}

// Todo says whether the bundle lacks row's snapshot, for --resume. The
// registry asks it, and runs Take, only for a run with --server-info.
func Todo(env Env, row results.Row) (bool, error) {
	done, err := rowsDone(env.Bundle())
	return !done[row.ID()], err
}

// Take asks every node of the row's server for INFO everything and
// appends each reply to File; a row whose snapshot the bundle holds
// already (--resume) is not asked again.
func Take(ctx context.Context, env Env, row results.Row) error {
	if todo, err := Todo(env, row); !todo || err != nil {
		return err
	}
	for _, n := range env.Target().Nodes {
		v, err := n.Probe.Do(ctx, "INFO", "everything")
		if err != nil {
			return fmt.Errorf("serverinfo: INFO of %s %s at %s: %w", row.Backend, row.Label, n.Addr, err)
		}
		info, ok := v.(string)
		if !ok {
			return fmt.Errorf("serverinfo: INFO of %s %s at %s: want a bulk string, got %T", row.Backend, row.Label, n.Addr, v)
		}
		rec := Record{Kind: "server-info", Row: row, Addr: n.Addr, Time: time.Now().UTC(), Info: info}
		if err := results.AppendJSONL(env.Bundle(), File, rec); err != nil {
			return err
		}
	}
	env.Printf("server info: %s %s: INFO of %d node(s) in %s\n", row.Backend, row.Label, len(env.Target().Nodes), File)
	return nil
}

// Read is the bundle's snapshots; none when it has no File.
func Read(dir string) ([]Record, error) {
	data, err := results.ReadOptional(dir, File)
	if err != nil || data == nil {
		return nil, err
	}
	return results.ParseJSONLines(data, File, func(r Record) error {
		if r.Kind != "server-info" {
			return fmt.Errorf("kind %q, want server-info", r.Kind)
		}
		return nil
	})
}

// rowsDone are the IDs of the rows File holds a snapshot of.
func rowsDone(dir string) (map[string]bool, error) {
	recs, err := Read(dir)
	done := map[string]bool{}
	for _, r := range recs {
		done[r.Row.ID()] = true
	}
	return done, err
}
