package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// scenarioRows gives a scenario with a backend of its own that backend
// (an external server's row) and expands its rows over its -b values;
// other scenarios keep the rows as planned.
func scenarioRows(c plan.Config, rows []results.Row) []results.Row {
	spec := c.Spec()
	if !spec.OwnBackend {
		return rows
	}
	if c.ServerAddr != "" {
		for i := range rows {
			rows[i].Backend = c.ScenarioName()
		}
	}
	if spec.Batches == nil {
		return rows
	}
	batches := spec.Batches
	if c.Explicit("batch") {
		batches = []int{c.Batch}
	}
	return plan.ExpandRows(rows, batches, func(r *results.Row, b int) {
		r.Batch = b
		r.Label = fmt.Sprintf("-b %d, %s", b, r.Label)
	})
}

// runAll runs every scenario in sequence, each into its own section of
// one bundle (a sub-bundle per scenario under cfg.OutDir), and prints one
// table per scenario under the reference's heading.
func runAll(ctx context.Context, cfg plan.Config, stdout, stderr interface{ Write([]byte) (int, error) }) error {
	if cfg.Resume != "" {
		return fmt.Errorf("%w: --resume completes one scenario's bundle: give its directory (%s/<scenario>)", fault.ErrConfig, cfg.Resume)
	}
	for _, s := range results.Scenarios {
		c := scenarioConfig(cfg, s)
		if _, err := c.Resolve(func(string) string { return "" }, parts); err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	out := cmp.Or(cfg.OutDir, filepath.Join(plan.DefaultOutParent, newRunID()))
	var errs []error
	index := results.ScenarioIndex{Schema: results.SchemaVersion, Scenario: results.ScenarioAll}
	for _, s := range results.Scenarios {
		c := scenarioConfig(cfg, s)
		c.OutDir = filepath.Join(out, s)
		var table bytes.Buffer
		fmt.Fprintf(stderr, "== scenario %s\n", results.ScenarioTitle[s])
		err := Run(ctx, c, &table, stderr)
		fmt.Fprintf(stdout, "## %s\n\n%s\n", results.ScenarioTitle[s], table.String())
		index.Scenarios = append(index.Scenarios, results.ScenarioEntry{Scenario: s, Dir: s, Error: errString(err)})
		if err != nil {
			errs = append(errs, fmt.Errorf("scenario %s: %w", s, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	if err := results.WriteJSON(out, results.FileScenarios, index); err != nil {
		errs = append(errs, err)
	} else if err := report.WriteIndex(out); err != nil {
		errs = append(errs, err)
	}
	return joinScenarioErrors(errs)
}

// scenarioConfig is one scenario's part of a --scenario all run:
// --backends applies only to a scenario without a backend of its own,
// --shards only to one that has shards.
func scenarioConfig(cfg plan.Config, s string) plan.Config {
	c := cfg
	c.Scenario = s
	spec := plan.SpecOf(s)
	if !spec.OwnBackend {
		return c
	}
	c.Backends = nil
	if !spec.Shards {
		c.Shards = nil
	}
	drop := func(g string) bool { return g == "backends" || g == "shards" && !spec.Shards }
	c.Given = slices.DeleteFunc(slices.Clone(cfg.Given), drop)
	return c
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// joinScenarioErrors keeps the most severe error first so ExitCode maps
// the whole run by it.
func joinScenarioErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b error) int { return ExitCode(b) - ExitCode(a) })
	if len(errs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("%w (and %d more scenarios failed: %v)", errs[0], len(errs)-1, errs[1:])
}
