package orchestrator

import (
	"context"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// sweepStale removes what earlier runs left behind, whatever runtime this
// run uses: child processes and pid files of runs whose owner is gone, and,
// when a Docker engine answers, containers labelled tierbench.run whose
// owner is gone. A process or container whose owning run is still alive
// is never touched: other runs may share the host. It returns what it did.
func sweepStale(ctx context.Context, stateDir string) []string {
	did := safe.RemoveStaleProcesses(stateDir)
	return append(did, sweepContainers(ctx)...)
}

// sweepContainers removes stale labelled containers when an engine
// answers within a few seconds; without one there is nothing to sweep.
func sweepContainers(ctx context.Context) []string {
	cli, err := docker.Endpoint{}.Client()
	if err != nil {
		return nil
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return nil
	}
	d := &docker.Driver{Engine: cli}
	return d.RemoveStale(ctx)
}

// serverDataDirs are the data dirs the run's servers write, on the server
// host: --data, or each of a --data list; none for a server the run does
// not start.
func (r *runner) serverDataDirs() []string { return r.targets.DataDirs() }

// localDataDirs are the data dirs of serverDataDirs on this machine.
func (r *runner) localDataDirs() []string {
	if r.cfg.HostsMode() && !r.cfg.ServerHostLocal() {
		return nil
	}
	return r.serverDataDirs()
}

// claimData takes every local data dir for the run (package safe): checked,
// locked and marked before the run creates or starts anything.
func (r *runner) claimData() error {
	at := safe.LocalDataPlaces(r.out)
	for _, dir := range r.localDataDirs() {
		c, err := safe.ClaimDataDir(dir, at, r.plan.RunID)
		if err != nil {
			r.releaseData()
			return err
		}
		r.local.claims = append(r.local.claims, c)
	}
	return nil
}

// releaseData drops the run's hold on its data dirs, after cleanData.
func (r *runner) releaseData() {
	for _, c := range r.local.claims {
		c.Release()
	}
	r.local.claims = nil
}

// cleanData removes the segment files the run's servers wrote (and a
// data dir the run created, once empty), unless --keep-data. A server the
// run did not start keeps its data: the run never wrote there.
func (r *runner) cleanData() {
	if r.cfg.KeepData || r.host == nil || r.dataCleaned {
		return
	}
	r.dataCleaned = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, dir := range r.serverDataDirs() {
		if err := r.host.WipeData(ctx, dir); err != nil {
			r.printf("cleanup: %s%v\n", hostPrefix(r.host), err)
			continue
		}
		r.printf("cleanup: %sremoved the segment files in %s (--keep-data keeps them)\n", hostPrefix(r.host), filepath.Clean(dir))
	}
}
