package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// containerEvent is one start or die of a run's container on an engine,
// in the order the engine reports them.
type containerEvent struct {
	role, name, action string
}

func (e containerEvent) String() string { return e.role + " " + e.name + " " + e.action }

// recordContainerEvents subscribes to the starts and deaths of every
// tierbench container on cli's engine and returns what was seen so far,
// in the engine's order, each time it is called.
func recordContainerEvents(ctx context.Context, t *testing.T, cli *client.Client) func() []containerEvent {
	t.Helper()
	f := make(client.Filters).Add("type", string(events.ContainerEventType)).Add("label", docker.LabelRun).
		Add("event", string(events.ActionStart)).Add("event", string(events.ActionDie))
	res := cli.Events(ctx, client.EventsListOptions{Filters: f})
	var mu sync.Mutex
	var seen []containerEvent
	go func() {
		for m := range res.Messages {
			mu.Lock()
			seen = append(seen, containerEvent{role: m.Actor.Attributes[docker.LabelRole], name: m.Actor.Attributes["name"], action: string(m.Action)})
			mu.Unlock()
		}
	}()
	return func() []containerEvent {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestRemoteWipeBeforeHoldDropped: across hosts, the run wipes the
// server host's data dir one last time after its servers are gone and
// before it lets go of the hold on that dir, so no other run can take the
// directory while the run's segment files are still in it. The server
// host's engine reports, in order, each container of the run starting
// and dying: the last wipe (hostprobe in a container named …-probe-wipe)
// must start after the last server died and die before the data-hold
// container does. Dropping the hold first (docker.Driver.Close calling
// dropHolds before BeforeDrop) has the hold die before that wipe starts.
func TestRemoteWipeBeforeHoldDropped(t *testing.T) {
	bin := testenv.MustBinary(t)
	hosts := testenv.MustHosts(t, 2, testenv.HostsOptions{})
	a, b := hosts[0], hosts[1]
	args, data, _ := hostArgs(t, a, []*testenv.Host{b}, "2", "1")
	args = append(args, "--warmup-seconds", "0")

	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	seen := recordContainerEvents(ctx, t, a.Client(t))
	res := runBinary(t, bin, args...)
	if res.code != 0 {
		t.Fatalf("run across hosts: exit %d:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "cleanup: host a: removed the segment files in "+data) {
		t.Errorf("progress lacks the final wipe of host a's %s:\n%s", data, res.stderr)
	}
	// The engine's stream may deliver the last deaths a moment after the
	// run returned: wait for the hold's.
	var evs []containerEvent
	held := func(e containerEvent) bool { return e.role == "datahold" && e.action == string(events.ActionDie) }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if evs = seen(); slices.ContainsFunc(evs, held) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host a's engine reported no death of the data-hold container within 10 s of the run's end; it reported:\n%v", evs)
		}
	}
	lastServerDie, wipeStart, wipeDie, holdDie := -1, -1, -1, slices.IndexFunc(evs, held)
	for i, e := range evs {
		switch {
		case e.role == "server" && e.action == string(events.ActionDie):
			lastServerDie = i
		case strings.HasSuffix(e.name, "-probe-wipe") && e.action == string(events.ActionStart):
			wipeStart = i
		case strings.HasSuffix(e.name, "-probe-wipe") && e.action == string(events.ActionDie):
			wipeDie = i
		}
	}
	if lastServerDie < 0 || wipeStart < lastServerDie || wipeDie < wipeStart || holdDie < wipeDie {
		var lines []string
		for i, e := range evs {
			lines = append(lines, fmt.Sprintf("  %2d %s", i, e))
		}
		t.Errorf("host a's engine: last server died at %d, last wipe started at %d and died at %d, the hold died at %d; want server < wipe start < wipe die < hold die:\n%s",
			lastServerDie, wipeStart, wipeDie, holdDie, strings.Join(lines, "\n"))
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Errorf("host a's data dir %s after the run: got %d entries, want none (segment files wiped, the hold's marker removed)", data, len(ents))
	}
	if _, err := os.Stat(filepath.Join(data, safe.DataMarker)); err == nil {
		t.Errorf("the run left its marker in host a's data dir")
	}
}
