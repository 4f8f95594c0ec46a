package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/compare"
	"github.com/tierbench/tierbench/orchestrator"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/reproduce"
	"github.com/tierbench/tierbench/results"
)

// reproduceOptions are run's switches of --reproduce.
type reproduceOptions struct {
	tolerance  float64
	unverified bool
}

// flagGiven says whether the flag name was set on fs.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// planConfig is the configuration of the plan at path with the flags of
// flags.Given overriding it, each override said on stderr, once this
// host was checked for what the plan needs. reproducing leaves the NUMA
// need to the reproduction, which marks pinned cells on another layout
// not comparable rather than refusing the whole plan.
func planConfig(path string, flags plan.Config, reproducing bool, stderr io.Writer) (plan.Config, error) {
	f, err := plan.ReadFile(path)
	if err != nil {
		return plan.Config{}, err
	}
	merged, said, err := plan.Override(f.Config(), flags, flags.Given)
	if err != nil {
		return plan.Config{}, fmt.Errorf("%w: %v", fault.ErrConfig, err)
	}
	for _, s := range said {
		fmt.Fprintf(stderr, "tierbench run: plan %s: %s\n", path, s)
	}
	// What the plan needs, after the overrides: --pin none drops the
	// pinned rows' NUMA need, --backends changes the backends.
	needs := plan.NeedsOf(merged, f.Needs.NUMANodes)
	if !flags.Explicit("runtime") && f.Needs.Runtime != "" {
		needs.Runtime = f.Needs.Runtime
	}
	if reproducing && needs.NUMANodes > 0 {
		if d, err := orchestrator.Describe(merged); err == nil && d.Plan.Needs.NUMANodes != needs.NUMANodes {
			fmt.Fprintf(stderr, "tierbench run: plan %s: its pinned rows ran on %d NUMA node(s) and this host has %d: they run pinned on this host's layout, and the reproduction marks them not comparable\n", path, needs.NUMANodes, d.Plan.Needs.NUMANodes)
		}
		needs.NUMANodes = 0
	}
	if err := orchestrator.CheckPlanHost(context.Background(), merged, needs); err != nil {
		return plan.Config{}, err
	}
	return merged, nil
}

// runReproduce is run --reproduce: the bundle checked against its sums,
// its plan run here into a new bundle, and the reproduction judged and
// written into that bundle.
func runReproduce(path string, flags plan.Config, opts reproduceOptions, stdout, stderr io.Writer) int {
	if opts.tolerance <= 0 {
		fmt.Fprintf(stderr, "tierbench run: --tolerance %g: want points above 0, such as 10\n", opts.tolerance)
		return orchestrator.ExitUsage
	}
	original, err := compare.LoadOne(path)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench run: --reproduce: %v\n", err)
		return orchestrator.ExitUsage
	}
	if len(original.Parts) != 1 {
		fmt.Fprintf(stderr, "tierbench run: --reproduce %s: a --scenario all bundle; reproduce one scenario's directory (%s/<scenario>) at a time\n", path, path)
		return orchestrator.ExitUsage
	}
	part := original.Parts[0]
	switch {
	case part.Tampered != nil && !opts.unverified:
		fmt.Fprintf(stderr, "tierbench run: --reproduce: %v; refusing to reproduce it (--unverified reproduces it anyway, and the reproduction says so)\n", part.Tampered)
		return orchestrator.ExitUsage
	case part.Unverified != "" && !opts.unverified:
		fmt.Fprintf(stderr, "tierbench run: --reproduce %s: %s; refusing to reproduce it (--unverified reproduces it anyway, and the reproduction says so)\n", path, part.Unverified)
		return orchestrator.ExitUsage
	}
	cfg, err := planConfig(part.Opened.Dir, flags, true, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench run: --reproduce: %v\n", err)
		return orchestrator.ExitCode(err)
	}
	if cfg.OutDir == "" {
		cfg.OutDir = filepath.Join(plan.DefaultOutParent, "reproduce-"+part.Opened.Results.Plan.RunID+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	runErr := orchestrator.Run(context.Background(), cfg, stdout, stderr)
	code := orchestrator.ExitCode(runErr)
	if runErr != nil {
		fmt.Fprintf(stderr, "tierbench run: %v\n", runErr)
	}
	switch code {
	case orchestrator.ExitOK, orchestrator.ExitFailed, orchestrator.ExitExcluded:
	default:
		return code // nothing a reproduction could be judged on
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, results.FileResults)); errors.Is(err, os.ErrNotExist) {
		return code
	}
	here, err := compare.LoadOne(cfg.OutDir)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench run: --reproduce: read the new bundle: %v\n", err)
		return orchestrator.ExitFailed
	}
	rep := reproduce.Judge(original, here, reproduce.Options{Tolerance: opts.tolerance})
	if err := rep.Write(cfg.OutDir); err != nil {
		fmt.Fprintf(stderr, "tierbench run: --reproduce: %v\n", err)
		return orchestrator.ExitFailed
	}
	fmt.Fprintf(stdout, "\n## Reproduction of %s\n\n%s", path, rep.Table())
	r, d, nc := rep.Counts()
	fmt.Fprintf(stderr, "reproduction: %d reproduced, %d differ, %d not comparable (tolerance ±%g points): %s\n", r, d, nc, opts.tolerance, filepath.Join(cfg.OutDir, reproduce.FileMarkdown))
	if code == orchestrator.ExitFailed {
		return code
	}
	return rep.ExitCode()
}
