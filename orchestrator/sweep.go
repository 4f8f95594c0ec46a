package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// sweepStale removes what earlier runs left behind, whatever runtime this
// run uses: child processes and pid files of runs whose owner is gone, and,
// when a Docker engine answers, containers labelled tierbench.run whose
// owner is gone. A process or container whose owning run is still alive
// is never touched: other runs may share the host. It returns what it did.
func sweepStale(ctx context.Context, stateDir string) []string {
	did := removeStaleProcesses(stateDir)
	return append(did, sweepContainers(ctx)...)
}

// sweepContainers removes stale labelled containers when an engine
// answers within a few seconds; without one there is nothing to sweep.
func sweepContainers(ctx context.Context) []string {
	cli, err := Endpoint{}.client()
	if err != nil {
		return nil
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		return nil
	}
	d := &dockerDriver{cli: cli}
	return d.removeStale(ctx)
}

// prepareDataDir notes whether DataDir exists before the run touches it,
// so that cleanData removes the directory itself only if the run made it.
func (r *runner) prepareDataDir() {
	if _, err := os.Stat(r.cfg.DataDir); errors.Is(err, os.ErrNotExist) {
		r.dataCreated = true
	}
}

// cleanData removes the segment files the run's servers wrote (and the
// data dir, when the run created it), unless --keep-data. A server the
// run did not start keeps its data: the run never wrote there.
func (r *runner) cleanData() {
	if r.cfg.ServerAddr != "" || r.cfg.KeepData || r.cfg.DataDir == "" {
		return
	}
	if r.hosts != nil && !r.hosts.server.ep.local() {
		r.cleanHostData()
		return
	}
	if _, err := os.Stat(r.cfg.DataDir); err != nil {
		return
	}
	var err error
	if r.dataCreated {
		err = os.RemoveAll(r.cfg.DataDir)
	} else {
		err = wipeDir(r.cfg.DataDir)
	}
	if err != nil {
		r.printf("cleanup: %v\n", err)
		return
	}
	r.printf("cleanup: removed the segment files in %s (--keep-data keeps them)\n", filepath.Clean(r.cfg.DataDir))
}
