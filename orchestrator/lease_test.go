package orchestrator

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
)

// TestSweepDecidesByLease: a run whose owner this machine cannot see (as
// a run on another machine driving the same engine) keeps its containers
// while its lease container runs, and loses them once it is gone.
func TestSweepDecidesByLease(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	ctx := t.Context()
	a, err := docker.NewDriver(ctx, docker.Endpoint{}, bin, "lease-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	a.Owner = "999999999:1:0ther" // no such process here: only the lease can vouch for it
	if err := a.TakeLease(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := a.Create(ctx, "server", "leased", []string{"server", "--port", strconv.Itoa(testenv.FreePort(t)), "--bind", "127.0.0.1"}, "", "", false, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	sweeper := &docker.Driver{Engine: cli}

	did := sweeper.RemoveStale(ctx)
	if in, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err != nil || !in.Container.State.Running {
		t.Fatalf("a container whose run holds its lease was removed or stopped by the sweep (%v): %q", err, did)
	}

	a.DropLease(ctx) // the run is gone: its attach connection dropped
	did = sweeper.RemoveStale(ctx)
	if _, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err == nil {
		t.Errorf("the container of a run whose lease is gone survived the sweep: %q", did)
	}
	want := fmt.Sprintf("left by run %s", a.RunID)
	if n := len(slices.DeleteFunc(slices.Clone(did), func(s string) bool { return !strings.Contains(s, want) })); n != 2 {
		t.Errorf("the sweep removed %d containers of run %s, want its server and its lease: %q", n, a.RunID, did)
	}
}
