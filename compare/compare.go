package compare

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/tierbench/tierbench/orchestrator"
)

// SchemaVersion is the version of the Comparison JSON document.
const SchemaVersion = 1

// scenarioStorage is the scenario every bundle of schema 1 ran: the
// tiered server on a native device (the reference's scenario 2).
const scenarioStorage = "storage"

// ErrIncomparable is wrapped by the refusal of bundles whose workloads
// measure different things.
var ErrIncomparable = errors.New("compare: workloads cannot be compared")

// ErrUsage is wrapped by errors in what was asked, not in the bundles.
var ErrUsage = errors.New("compare: bad arguments")

// Options are the switches of `tierbench compare`.
type Options struct {
	// Force compares bundles whose record size or dbsize differ; the
	// output then says so in bold.
	Force bool
}

// Bundle is one results bundle as compare reads it.
type Bundle struct {
	Name   string // the column heading: the bundle directory's name
	Opened orchestrator.Opened
}

// Load opens each path (a bundle directory or its results.json) and names
// the bundles by their directory, adding "#N" where two names collide.
func Load(paths []string) ([]Bundle, error) {
	if len(paths) < 2 {
		return nil, fmt.Errorf("%w: want at least two bundles, got %d", ErrUsage, len(paths))
	}
	bundles := make([]Bundle, 0, len(paths))
	seen := map[string]int{}
	for _, p := range paths {
		o, err := orchestrator.OpenBundle(p)
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", p, err)
		}
		name := filepath.Base(filepath.Clean(o.Dir))
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s#%d", name, n)
		}
		bundles = append(bundles, Bundle{Name: name, Opened: o})
	}
	return bundles, nil
}

// Comparison is the result of comparing bundles, and the --json document.
type Comparison struct {
	Schema  int          `json:"schema_version"`
	Alpha   float64      `json:"alpha"`
	Test    string       `json:"test"`
	Bundles []BundleInfo `json:"bundles"`
	// Forced names the differences --force let through.
	Forced    []string   `json:"forced,omitempty"`
	Scenarios []Scenario `json:"scenarios"`
	// Host lists the fingerprint fields that differ; Workload the flags.
	Host     []Difference `json:"host_differences"`
	Workload []Difference `json:"workload_differences"`
	// Notes are the statistics' warnings, numbered from 1 in the
	// Markdown; a Value refers to them by index.
	Notes []string `json:"notes"`
}

// BundleInfo identifies one compared bundle.
type BundleInfo struct {
	Name     string    `json:"name"`
	Dir      string    `json:"dir"`
	RunID    string    `json:"run_id"`
	Schema   int       `json:"schema_version"`
	Finished time.Time `json:"finished"`
	// FioIOPS512 is the bundle's fio ceiling at 512 B; 0 when unknown.
	FioIOPS512 float64 `json:"fio_iops_512"`
}

// Scenario is one table: the cells of one server set-up.
type Scenario struct {
	Name  string    `json:"name"`
	Cells []CellCmp `json:"cells"`
}

// CellCmp is one row × thread count across the bundles.
type CellCmp struct {
	Backend string  `json:"backend"`
	Pin     string  `json:"pin"`
	Label   string  `json:"label"` // the first bundle's NUMA column
	Threads int     `json:"threads"`
	Values  []Value `json:"values"` // one per bundle, in argument order
}

// Value is one bundle's cell and, from the second bundle on, its
// difference from the first bundle's.
type Value struct {
	Present  bool      `json:"present"`
	Median   float64   `json:"median_ops_per_sec"`
	Passes   []float64 `json:"passes_ops_per_sec,omitempty"`
	Excluded string    `json:"excluded,omitempty"`

	Compared    bool    `json:"compared"`
	DeltaPct    float64 `json:"delta_pct"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Delta is the table's text: "+7.3 %", "~", or "" when not compared.
	Delta string `json:"delta,omitempty"`
	// Stat is benchmath's "p=0.008 n=5" for the comparison.
	Stat  string `json:"stat,omitempty"`
	Notes []int  `json:"notes,omitempty"`
}

// Difference is one field that is not the same in every bundle.
type Difference struct {
	Field  string   `json:"field"`
	Values []string `json:"values"` // one per bundle
}

// Compare sets the bundles side by side against the first one. It refuses
// bundles whose workloads differ in record size or dbsize unless
// opts.Force.
func Compare(bundles []Bundle, opts Options) (*Comparison, error) {
	if len(bundles) < 2 {
		return nil, fmt.Errorf("%w: want at least two bundles, got %d", ErrUsage, len(bundles))
	}
	incomparable := incomparabilities(bundles)
	if len(incomparable) > 0 && !opts.Force {
		return nil, fmt.Errorf("%w: %s (--force compares them anyway)", ErrIncomparable, strings.Join(incomparable, "; "))
	}
	c := &Comparison{
		Schema: SchemaVersion, Alpha: benchmath.DefaultThresholds.CompareAlpha,
		Test: "Mann–Whitney U test over the passes (golang.org/x/perf/benchmath, as benchstat uses it)", Forced: incomparable,
		Host: hostDifferences(bundles), Workload: workloadDifferences(bundles), Notes: []string{},
	}
	for _, b := range bundles {
		r := b.Opened.Results
		c.Bundles = append(c.Bundles, BundleInfo{Name: b.Name, Dir: b.Opened.Dir, RunID: r.Plan.RunID, Schema: r.Schema,
			Finished: r.Finished, FioIOPS512: r.FioIOPS512})
	}
	c.Scenarios = []Scenario{{Name: scenarioStorage, Cells: c.cells(bundles)}}
	return c, nil
}

// cellID names a cell independently of the host: the NUMA label differs
// between a two-node and a one-node host for the same pin mode.
type cellID struct {
	backend, pin string
	threads      int
}

// cells lists the union of the bundles' cells, rows in order of first
// appearance and thread counts ascending within a row.
func (c *Comparison) cells(bundles []Bundle) []CellCmp {
	type rowID struct{ backend, pin string }
	var rows []rowID
	labels := map[rowID]string{}
	threads := map[rowID][]int{}
	for _, b := range bundles {
		for _, cell := range b.Opened.Results.Cells {
			id := rowID{cell.Row.Backend, cell.Row.Pin}
			if _, ok := labels[id]; !ok {
				rows = append(rows, id)
				labels[id] = cell.Row.Label
			}
			if !slices.Contains(threads[id], cell.Threads) {
				threads[id] = append(threads[id], cell.Threads)
			}
		}
	}
	passes := make([]map[cellID][]float64, len(bundles))
	for i, b := range bundles {
		passes[i] = passesByCell(b.Opened)
	}
	var out []CellCmp
	for _, row := range rows {
		ts := threads[row]
		slices.Sort(ts)
		for _, t := range ts {
			id := cellID{row.backend, row.pin, t}
			cc := CellCmp{Backend: row.backend, Pin: row.pin, Label: labels[row], Threads: t}
			for i, b := range bundles {
				v := Value{}
				if cell, ok := findCell(b.Opened.Results.Cells, id); ok && cell.Passes > 0 {
					v = Value{Present: true, Median: cell.Median, Passes: passes[i][id], Excluded: cell.Excluded}
				}
				if i > 0 {
					c.against(&v, cc.Values[0], bundles[0].Name, b.Name)
				}
				cc.Values = append(cc.Values, v)
			}
			out = append(out, cc)
		}
	}
	return out
}

// against fills v's difference from base, the first bundle's value.
func (c *Comparison) against(v *Value, base Value, baseName, name string) {
	switch {
	case !v.Present || !base.Present:
		return
	case v.Excluded != "" || base.Excluded != "":
		c.note(v, "a cell kept out of a table (excluded) is not compared")
		return
	}
	v.Compared = true
	if base.Median != 0 {
		v.DeltaPct = 100 * (v.Median/base.Median - 1)
	}
	if len(v.Passes) == 0 || len(base.Passes) == 0 {
		// A lone results.json holds medians only.
		v.Delta = formatPct(v.DeltaPct)
		c.note(v, fmt.Sprintf("no passes to test (cells.jsonl missing from %s or %s): the delta is of the medians alone, its significance unknown", baseName, name))
		return
	}
	// NewSample sorts its values in place: keep the passes in run order.
	s1 := benchmath.NewSample(slices.Clone(base.Passes), &benchmath.DefaultThresholds)
	s2 := benchmath.NewSample(slices.Clone(v.Passes), &benchmath.DefaultThresholds)
	cmp := benchmath.AssumeNothing.Compare(s1, s2)
	v.P = cmp.P
	v.Stat = cmp.String()
	v.Significant = cmp.P <= cmp.Alpha
	if v.Significant {
		v.Delta = formatPct(v.DeltaPct)
	} else {
		v.Delta = "~"
	}
	for _, w := range cmp.Warnings {
		c.note(v, w.Error())
	}
}

// note attaches a footnote to v, numbering each distinct text once.
func (c *Comparison) note(v *Value, text string) {
	i := slices.Index(c.Notes, text)
	if i < 0 {
		i = len(c.Notes)
		c.Notes = append(c.Notes, text)
	}
	if !slices.Contains(v.Notes, i) {
		v.Notes = append(v.Notes, i)
	}
}

func formatPct(p float64) string { return fmt.Sprintf("%+.1f %%", p) }

func findCell(cells []orchestrator.Cell, id cellID) (orchestrator.Cell, bool) {
	for _, c := range cells {
		if c.Row.Backend == id.backend && c.Row.Pin == id.pin && c.Threads == id.threads {
			return c, true
		}
	}
	return orchestrator.Cell{}, false
}

// passesByCell collects each cell's ops/sec per pass the way the run's
// median took them: one record per pass number, the first the run
// planned, so a resumed run's extra records do not count twice.
func passesByCell(o orchestrator.Opened) map[cellID][]float64 {
	limit := o.Results.Plan.Workload.Passes
	out := map[cellID][]float64{}
	seen := map[cellID]map[int]bool{}
	for _, p := range o.Passes {
		id := cellID{p.Row.Backend, p.Row.Pin, p.Threads}
		if seen[id] == nil {
			seen[id] = map[int]bool{}
		}
		if seen[id][p.Pass] || (limit > 0 && len(seen[id]) == limit) {
			continue
		}
		seen[id][p.Pass] = true
		out[id] = append(out[id], p.OpsPerSec)
	}
	return out
}
