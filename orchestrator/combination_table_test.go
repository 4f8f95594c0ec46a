package orchestrator

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

var updateCombinations = flag.Bool("update-combinations", false, "rewrite the generated table of docs/combinations.md")

// combinationColumns are where a run can go: the runtimes, a cluster of
// shards, a server already running, hosts of their own.
var combinationColumns = []struct {
	name string
	set  func(*plan.Config)
}{
	{"`--runtime process`", func(c *plan.Config) { c.Runtime = plan.RuntimeProcess }},
	{"`--runtime docker`", func(c *plan.Config) { c.Runtime = plan.RuntimeDocker }},
	{"`--shards 2`", func(c *plan.Config) { c.Shards, c.DBSize, c.Pins = []int{2}, 20_000_000, []string{plan.PinNone} }},
	{"`--server-addr`", func(c *plan.Config) { c.ServerAddr = "127.0.0.1:6379" }},
	{"across hosts", func(c *plan.Config) {
		c.ServerHost, c.ClientHosts = "srv=tcp://127.0.0.1:1", "cli=tcp://127.0.0.1:2"
	}},
}

// combinationRows are what a run can measure: every registered part that
// says how it is asked for, and the scenarios.
func combinationRows() []plan.Example {
	var rows []plan.Example
	for _, s := range []string{results.ScenarioMemory, results.ScenarioLocalMemory, results.ScenarioAll} {
		rows = append(rows, scenarioExample(s))
	}
	for _, p := range parts {
		if e, ok := p.(plan.Example); ok {
			rows = append(rows, e)
		}
	}
	return rows
}

// scenarioExample is a --scenario value as a row of the table: the
// scenario is the plan's own dimension, refused by plan.Validate.
type scenarioExample string

func (s scenarioExample) Name() string             { return "scenario " + string(s) }
func (scenarioExample) Supports(plan.Config) error { return nil }
func (s scenarioExample) Flags() string            { return "--scenario " + string(s) }
func (s scenarioExample) Ask(c *plan.Config)       { c.Scenario = string(s) }

// combinationTable renders what Resolve says of every row in every
// column: "runs", or "refused" and a note with the refusal's first
// sentence, numbered once per distinct sentence.
func combinationTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| |")
	for _, c := range combinationColumns {
		b.WriteString(" " + c.name + " |")
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(combinationColumns)))
	b.WriteString("\n")
	var notes []string
	for _, row := range combinationRows() {
		fmt.Fprintf(&b, "| `%s` |", row.Flags())
		for _, col := range combinationColumns {
			cfg := plan.Config{}
			col.set(&cfg)
			row.Ask(&cfg)
			_, err := cfg.Resolve(func(string) string { return "" }, parts)
			if err == nil {
				b.WriteString(" runs |")
				continue
			}
			if !strings.Contains(err.Error(), fault.ErrConfig.Error()) {
				t.Fatalf("%s with %s: %v, want a configuration error or none", row.Flags(), col.name, err)
			}
			why := firstRefusal(err)
			n := indexOf(notes, why)
			if n < 0 {
				notes = append(notes, why)
				n = len(notes) - 1
			}
			fmt.Fprintf(&b, " refused (%d) |", n+1)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(&b, "%d. %s\n", i+1, n)
	}
	return b.String()
}

// firstRefusal is the first refusal of a configuration error, without
// the error's prefix.
func firstRefusal(err error) string {
	s := strings.TrimPrefix(err.Error(), fault.ErrConfig.Error()+": ")
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

const (
	combinationsBegin = "<!-- generated from the registry by TestCombinationTable (go test ./orchestrator -run TestCombinationTable -update-combinations); do not edit -->\n"
	combinationsEnd   = "<!-- end of the generated table -->\n"
)

// TestCombinationTable holds docs/combinations.md's table to what the
// registry's parts and the plan refuse: the table is generated, so it
// cannot disagree with the code.
func TestCombinationTable(t *testing.T) {
	path := filepath.Join("..", "docs", "combinations.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), combinationsBegin)
	_, after, ok2 := strings.Cut(rest, combinationsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s: no generated table between %q and %q", path, combinationsBegin, combinationsEnd)
	}
	want := combinationTable(t)
	if *updateCombinations {
		if err := os.WriteFile(path, []byte(before+combinationsBegin+want+combinationsEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, _, _ := strings.Cut(rest, combinationsEnd); got != want {
		t.Errorf("%s: the generated table is stale; run go test ./orchestrator -run TestCombinationTable -update-combinations\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
