package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
)

// TestServerImageNeverPulled: an image on the engine is taken as it is;
// one that is not is refused (exit 2) with the docker pull line to run,
// and nothing is pulled.
func TestServerImageNeverPulled(t *testing.T) {
	present := testenv.MustRedisImage(t)
	cli := testenv.MustDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := docker.EnsureServerImage(ctx, cli, "", present, false); err != nil {
		t.Errorf("present image %s: got %v, want nil", present, err)
	}
	absent := "tierbench-test-absent:never-built"
	err := docker.EnsureServerImage(ctx, cli, " at host b", absent, false)
	if !errors.Is(err, fault.ErrConfig) || ExitCode(err) != 2 {
		t.Errorf("absent image: got %v (exit %d), want a configuration refusal (exit 2)", err, ExitCode(err))
	}
	want := "--server-image " + absent + " is not on the Docker engine at host b, and a run pulls nothing unless asked: run\n\n    docker pull " + absent + "\n"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v,\nwant a sentence containing %q", err, want)
	}
	if _, err := cli.ImageInspect(ctx, absent); err == nil {
		t.Errorf("got image %s on the engine, want nothing pulled", absent)
	}
}
