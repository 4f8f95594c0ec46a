package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/tierbench/tierbench/orchestrator"
	"github.com/tierbench/tierbench/orchestrator/plan"
)

func init() {
	register(command{name: "plan", summary: "print the plan a run's flags give (rows, dataset, disk and memory, estimated time, what it needs of a host) as YAML or JSON, running nothing", run: runPlan})
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	var cfg plan.Config
	var format, from string
	fs, parseFlags := runFlags("plan", &cfg)
	fs.StringVar(&format, "format", "yaml", "yaml or json")
	fs.StringVar(&from, "plan", "", "start from this plan `file` (or a bundle, or its plan.json) instead of the profile: the flags given beside it override it, each said on stderr")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench plan [run's flags] [--format yaml|json] [--plan FILE]

Prints the plan 'tierbench run' would run with the same flags, without
starting, loading or measuring anything: the configuration as it resolves
(the workload a bundle's plan.json records), the rows as this host would
plan them (backend, pin and NUMA placement, server, shards, -b, memory,
read cache, TLS), the dataset and the disk and memory it needs, the
estimated time counted phase by phase as the run's progress line counts
it before anything is measured (the most where a phase may stop early),
and what a host must give to run it (runtime, NUMA nodes of the pinned
rows, backends, servers, images). Save it, review it, and run it with
'tierbench run --plan FILE'; the format is versioned and described in
docs/plan-files.md.

Exit status: 0 printed; 2 bad flags or a configuration run would refuse.

Examples:
  tierbench plan --profile quick --backends uring > quick.yaml
  tierbench run --plan quick.yaml --data /mnt/nvme/tb
  tierbench plan --plan tierbench-results/RUN --format json (a bundle's plan, as this host would run it)

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if err := parseFlags(); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	cfg.Given = slices.DeleteFunc(cfg.Given, func(g string) bool { return g == "format" || g == "plan" })
	if format != "yaml" && format != "json" {
		return usageError(fs, stderr, "--format %q: want yaml or json", format)
	}
	if from != "" {
		f, err := plan.ReadFile(from)
		if err != nil {
			fmt.Fprintf(stderr, "tierbench plan: %v\n", err)
			return orchestrator.ExitUsage
		}
		merged, said, err := plan.Override(f.Config(), cfg, cfg.Given)
		if err != nil {
			fmt.Fprintf(stderr, "tierbench plan: %v\n", err)
			return orchestrator.ExitUsage
		}
		for _, s := range said {
			fmt.Fprintf(stderr, "tierbench plan: --plan %s: %s\n", from, s)
		}
		cfg = merged
	}
	d, err := orchestrator.Describe(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench plan: %v\n", err)
		return orchestrator.ExitCode(err)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(stderr, "%s\n", n)
	}
	out, err := d.Plan.Marshal(format)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench plan: %v\n", err)
		return orchestrator.ExitUsage
	}
	stdout.Write(out)
	return 0
}
