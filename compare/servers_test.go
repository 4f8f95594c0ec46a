package compare

import (
	"strings"
	"testing"
)

// TestMarkdownServersApart: cells of two servers get a server column and
// stay on lines of their own; tierbench's own server is named.
func TestMarkdownServersApart(t *testing.T) {
	c := &Comparison{Bundles: []BundleInfo{{Name: "a"}}, Scenarios: []Scenario{{Name: "memory", Cells: []CellCmp{
		{Backend: "memory", Pin: "none", Label: "no pin", Threads: 1, Values: []Value{{Present: true, Median: 100_000}}},
		{Backend: "memory", Pin: "none", Label: "no pin", Threads: 1, Server: "redis", Values: []Value{{Present: true, Median: 90_000}}},
	}}}}
	var b strings.Builder
	c.scenarioTable(&b, c.Scenarios[0])
	for _, want := range []string{"| server | backend | NUMA | threads | a |", "|:--|:--|:--|--:|--:|", "| tierbench | Memory | no pin | 1 | 100 K |", "| redis | Memory | no pin | 1 | 90 K |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("got\n%s\nwant a line containing %q", b.String(), want)
		}
	}
	if got := chartFile("memory", c.Scenarios[0].Cells[1]); got != "compare-memory-redis-memory-none.svg" {
		t.Errorf("chartFile: got %s", got)
	}
}
