package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
)

// pickDriver opens the runtime the configuration chooses (plan's
// ChooseRuntime), falling back to processes where it may and the runtime
// is unavailable here.
func (r *runner) pickDriver(ctx context.Context) error {
	if r.cfg.HostsMode() {
		return r.pickHosts(ctx)
	}
	choice := r.cfg.ChooseRuntime(r.targets.Started())
	if choice.Note != "" {
		r.printf("runtime: %s (%s)\n", choice.Name, choice.Note)
	}
	drv, err := runtimes[choice.Name](ctx, r)
	if err != nil && choice.Fallback != "" && errors.Is(err, rig.ErrUnavailable) {
		r.printf("runtime: %s (%v)\n", choice.Fallback, err)
		drv, err = runtimes[choice.Fallback](ctx, r)
	}
	if err != nil {
		return err
	}
	if err := prepare(ctx, r.cfg, drv); err != nil {
		drv.Close(context.Background())
		return err
	}
	r.drv, r.clients = drv, r.localFleet()
	r.plan.Runtime = drv.Name()
	return nil
}

// openDocker opens the local Docker engine: the run's image built, the
// engine's lease taken.
func openDocker(ctx context.Context, r *runner) (rig.Driver, error) {
	d, err := docker.NewDriver(ctx, docker.Endpoint{}, r.cfg.Binary, r.plan.RunID)
	if err != nil {
		return nil, rig.Unavailable(fmt.Errorf("the Docker runtime cannot start: %w", err))
	}
	if err := d.TakeLease(ctx); err != nil {
		d.Close(context.Background())
		return nil, err
	}
	d.Warn = r.printf
	r.printf("runtime: docker (image %s)\n", d.Image)
	return d, nil
}

// openProcess starts servers and clients as child processes here.
func openProcess(_ context.Context, r *runner) (rig.Driver, error) {
	return process.NewDriver(r.cfg.Binary, r.local.pids), nil
}
