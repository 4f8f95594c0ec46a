package serverinfo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// env is the run as the step sees it, over a real server's nodes.
type env struct {
	cfg    plan.Config
	bundle string
	tgt    target.Server
	said   strings.Builder
}

func (e *env) Config() plan.Config            { return e.cfg }
func (e *env) Bundle() string                 { return e.bundle }
func (e *env) Printf(format string, a ...any) { fmt.Fprintf(&e.said, format, a...) }
func (e *env) Target() target.Server          { return e.tgt }

// TestTakeKeepsEveryNodesInfo: against two real redis-servers as one
// row's nodes, each node's whole INFO lands in server-info.jsonl once;
// a second Take of the same row (--resume) asks nothing and adds
// nothing; without --server-info nothing is written.
func TestTakeKeepsEveryNodesInfo(t *testing.T) {
	a, b := testenv.MustRedisServer(t), testenv.MustRedisServer(t)
	row := results.Row{Backend: "memory", Pin: plan.PinNone, Label: "no pin"}
	other := results.Row{Backend: "memory", Pin: plan.PinPinned, Label: "pinned"}
	e := &env{bundle: t.TempDir()}
	e.cfg.ServerInfo = true
	for _, r := range []*testenv.Redis{a, b} {
		e.tgt.Nodes = append(e.tgt.Nodes, &target.Node{Addr: r.Addr, Probe: rig.LocalProbe{Addr: r.Addr}})
	}
	ctx := context.Background()
	if todo, err := Todo(e, row); err != nil || !todo {
		t.Fatalf("Todo before the snapshot: got %v, %v; want true", todo, err)
	}
	if err := Take(ctx, e, row); err != nil {
		t.Fatal(err)
	}
	if err := Take(ctx, e, row); err != nil { // resumed: already there
		t.Fatal(err)
	}
	recs, err := Read(e.bundle)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want one per node (2): %+v", len(recs), recs)
	}
	for i, r := range recs {
		if r.Addr != e.tgt.Nodes[i].Addr || r.Row.ID() != row.ID() || !strings.Contains(r.Info, "redis_version:") || !strings.Contains(r.Info, "# Keyspace") {
			t.Errorf("record %d: got %s %s with INFO %.60q…, want %s %s with the whole INFO", i, r.Row.ID(), r.Addr, r.Info, row.ID(), e.tgt.Nodes[i].Addr)
		}
	}
	for _, tc := range []struct {
		row  results.Row
		want bool
	}{{row, false}, {other, true}} {
		if todo, err := Todo(e, tc.row); err != nil || todo != tc.want {
			t.Errorf("Todo(%s) after the snapshot: got %v, %v; want %v", tc.row.ID(), todo, err, tc.want)
		}
	}

	// Without --server-info the registry never runs the step; the
	// estimate counts nothing for it.
	off := &env{bundle: t.TempDir(), tgt: e.tgt}
	if n, _, _ := Work(off.cfg, nil, true); n != 0 {
		t.Errorf("Work without --server-info: got %d, want 0", n)
	}
}

// TestTakeNamesTheNode: a node that does not answer fails the step with
// its address, and nothing is recorded for it.
func TestTakeNamesTheNode(t *testing.T) {
	e := &env{bundle: t.TempDir()}
	e.cfg.ServerInfo = true
	dead := "127.0.0.1:1"
	e.tgt.Nodes = []*target.Node{{Addr: dead, Probe: rig.LocalProbe{Addr: dead}}}
	err := Take(context.Background(), e, results.Row{Backend: "memory", Pin: plan.PinNone, Label: "no pin"})
	if err == nil || !strings.Contains(err.Error(), dead) {
		t.Fatalf("got %v, want an error naming %s", err, dead)
	}
	if recs, _ := Read(e.bundle); len(recs) != 0 {
		t.Errorf("got %d records, want none", len(recs))
	}
}

// FuzzRead: no bytes in server-info.jsonl make Read panic.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"kind":"server-info","row":{"backend":"memory"},"addr":"a","info":"x"}` + "\n"))
	f.Add([]byte("{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, File), data, 0o644); err != nil {
			t.Fatal(err)
		}
		Read(dir)
	})
}
