package compare

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/tierbench/tierbench/results"
)

// SchemaVersion is the version of the Comparison JSON document.
const SchemaVersion = 1

// ErrIncomparable is wrapped by the refusal of bundles whose workloads
// measure different things.
var ErrIncomparable = errors.New("compare: workloads cannot be compared")

// ErrTampered is wrapped by the refusal of a bundle that failed the
// check of its sums.
var ErrTampered = errors.New("compare: a bundle does not match its sums")

// ErrUnverified is wrapped by the refusal of a bundle whose sums are
// missing or leave results.json uncovered.
var ErrUnverified = errors.New("compare: a bundle's sums do not vouch for all of it")

// ErrUsage is wrapped by errors in what was asked, not in the bundles.
var ErrUsage = errors.New("compare: bad arguments")

// Options are the switches of `tierbench compare`.
type Options struct {
	// Force compares bundles whose record size or dbsize differ; the
	// output then says so in bold.
	Force bool
	// Unverified compares bundles whose sums fail, are missing or leave
	// results.json uncovered; every figure from one is marked.
	Unverified bool
	// FailOnRegressionPct, when > 0, makes Gate name every cell
	// significantly slower than the first bundle's by more than it.
	FailOnRegressionPct float64
}

// Comparison is the result of comparing bundles, and the --json document.
type Comparison struct {
	Schema  int          `json:"schema_version"`
	Alpha   float64      `json:"alpha"`
	Test    string       `json:"test"`
	Bundles []BundleInfo `json:"bundles"`
	// Forced names the differences --force let through.
	Forced []string `json:"forced,omitempty"`
	// Unverified names each bundle whose sums failed or vouch for less
	// than all of it, compared only with --unverified; every Value from
	// one has Unverified set.
	Unverified []Unverified `json:"unverified,omitempty"`
	Scenarios  []Scenario   `json:"scenarios"`
	// Host lists the fingerprint fields that differ; Workload the flags.
	Host     []Difference `json:"host_differences"`
	Workload []Difference `json:"workload_differences"`
	// Notes are the statistics' warnings, numbered from 1 in the
	// Markdown; a Value refers to them by index.
	Notes []string `json:"notes"`
	// Gate is the verdict of --fail-on-regression; nil without it.
	Gate *Gate `json:"gate,omitempty"`
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

// CellCmp is one row × thread count across the bundles: a row is
// everything results.RowKey tells apart (backend, pin, -b, shards, hosts,
// server).
type CellCmp struct {
	Backend string `json:"backend"`
	Pin     string `json:"pin"`
	// Batch is the row's own -b (scenario 3's rows), Shards its servers
	// (a --shards row), Hosts its hosts; zero when the row has none.
	Batch  int    `json:"batch,omitempty"`
	Shards int    `json:"shards,omitempty"`
	Hosts  string `json:"hosts,omitempty"`
	// Server is the row's server when it is not tierbench's own
	// (results.RowKey's Server).
	Server  string  `json:"server,omitempty"`
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
	// MinP is the smallest p the test could give for these two pass
	// counts (minTwoSidedP): above the comparison's α no difference can
	// be significant. 0 when not tested.
	MinP float64 `json:"min_p,omitempty"`
	// Stat is benchmath's "p=0.008 n=5" for the comparison.
	Stat  string `json:"stat,omitempty"`
	Notes []int  `json:"notes,omitempty"`
	// Unverified: the median comes from a bundle its sums do not vouch
	// for (--unverified); a delta is as unverified as either median.
	Unverified bool `json:"unverified,omitempty"`
}

// Unverified is a bundle (or one scenario of it) whose files its sums do
// not all vouch for.
type Unverified struct {
	Bundle string `json:"bundle"` // its name, with the scenario of an all bundle
	// Failed: its files or medians are not the ones its sums recorded;
	// else its sums are missing or leave results.json uncovered.
	Failed bool   `json:"failed"`
	Why    string `json:"why"`
}

// Difference is one field that is not the same in every bundle.
type Difference struct {
	Field  string   `json:"field"`
	Values []string `json:"values"` // one per bundle
}

// Compare sets the bundles side by side against the first one, one table
// per scenario. It refuses a bundle that failed the check of its checksums
// (ErrTampered, naming what differs) and bundles whose workloads differ in
// record size or dbsize, unless opts.Force; what --force let through is
// then said in bold.
func Compare(bundles []Bundle, opts Options) (*Comparison, error) {
	if len(bundles) < 2 {
		return nil, fmt.Errorf("%w: want at least two bundles, got %d", ErrUsage, len(bundles))
	}
	var unverified []Unverified
	var refused []string
	var tampered bool
	for _, b := range bundles {
		for _, p := range b.parts() {
			of := b.Name
			if len(b.parts()) > 1 {
				of += " (scenario " + p.Scenario + ")"
			}
			switch {
			case p.Tampered != nil:
				why := strings.TrimPrefix(p.Tampered.Error(), results.ErrTampered.Error()+": ")
				refused = append(refused, fmt.Sprintf("%s failed verification: %s", of, why))
				unverified = append(unverified, Unverified{Bundle: of, Failed: true, Why: why})
				tampered = true
			case p.Unverified != "":
				refused = append(refused, fmt.Sprintf("%s is not verified: %s", of, p.Unverified))
				unverified = append(unverified, Unverified{Bundle: of, Why: p.Unverified})
			}
		}
	}
	if len(refused) > 0 && !opts.Unverified {
		kind := ErrUnverified
		if tampered {
			kind = ErrTampered
		}
		return nil, fmt.Errorf("%w: %s (--unverified compares anyway, marking every figure from it)", kind, strings.Join(refused, "; "))
	}
	scenarios := scenarioNames(bundles)
	incomparable := incomparabilities(bundles, scenarios)
	if len(incomparable) > 0 && !opts.Force {
		return nil, fmt.Errorf("%w: %s (--force compares them anyway)", ErrIncomparable, strings.Join(incomparable, "; "))
	}
	c := &Comparison{
		Schema: SchemaVersion, Alpha: benchmath.DefaultThresholds.CompareAlpha,
		Test: "Mann–Whitney U test over the passes (golang.org/x/perf/benchmath, as benchstat uses it)", Forced: incomparable,
		Unverified: unverified,
		Host:       hostDifferences(bundles), Workload: workloadDifferences(bundles, scenarios), Notes: []string{},
	}
	for _, b := range bundles {
		r := b.Opened.Results
		c.Bundles = append(c.Bundles, BundleInfo{Name: b.Name, Dir: bundleDir(b), RunID: r.Plan.RunID, Schema: r.Schema,
			Finished: r.Finished, FioIOPS512: r.FioIOPS512})
	}
	for _, s := range scenarios {
		c.Scenarios = append(c.Scenarios, Scenario{Name: s, Cells: c.cells(bundles, s)})
	}
	return c, nil
}

// bundleDir is the directory the bundle was read from: the top of an all
// bundle, else the bundle's own.
func bundleDir(b Bundle) string {
	if len(b.Parts) > 1 {
		return filepath.Dir(b.Parts[0].Opened.Dir)
	}
	return b.Opened.Dir
}

// scenarioNames lists every scenario any bundle holds, in the order a
// --scenario all run takes them, then any other in order of appearance.
func scenarioNames(bundles []Bundle) []string {
	var names []string
	for _, b := range bundles {
		for _, p := range b.parts() {
			if !slices.Contains(names, p.Scenario) {
				names = append(names, p.Scenario)
			}
		}
	}
	rank := func(s string) int {
		if i := slices.Index(results.Scenarios, s); i >= 0 {
			return i
		}
		return len(results.Scenarios)
	}
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	return names
}

// cellID names a cell independently of the host: the NUMA label differs
// between a two-node and a one-node host for the same pin mode, so the
// row is its results.RowKey.
type cellID struct {
	row     results.RowKey
	threads int
}

// cells lists the union of the bundles' cells of scenario s, rows in
// order of first appearance and thread counts ascending within a row.
func (c *Comparison) cells(bundles []Bundle, s string) []CellCmp {
	var rows []results.RowKey
	labels := map[results.RowKey]string{}
	threads := map[results.RowKey][]int{}
	parts := make([]*Part, len(bundles))
	unverified := make([]bool, len(bundles))
	for i, b := range bundles {
		p, ok := b.part(s)
		if !ok {
			continue
		}
		parts[i] = &p
		unverified[i] = p.Tampered != nil || p.Unverified != ""
		plan := p.Opened.Results.Plan
		for _, cell := range p.Opened.Results.Cells {
			id := plan.RowKey(cell.Row)
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
	for i, p := range parts {
		if p != nil {
			passes[i] = passesByCell(p.Opened)
		}
	}
	var out []CellCmp
	for _, row := range rows {
		ts := threads[row]
		slices.Sort(ts)
		for _, t := range ts {
			id := cellID{row, t}
			cc := CellCmp{Backend: row.Backend, Pin: row.Pin, Batch: row.Batch, Shards: row.Shards, Hosts: row.Hosts, Server: row.Server, Label: labels[row], Threads: t}
			for i, b := range bundles {
				v := Value{}
				if p := parts[i]; p != nil {
					if cell, ok := findCell(p.Opened.Results, id); ok && cell.Passes > 0 {
						v = Value{Present: true, Median: cell.Median, Passes: passes[i][id], Excluded: cell.Excluded, Unverified: unverified[i]}
					}
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
	v.MinP = minTwoSidedP(len(base.Passes), len(v.Passes))
	if v.Significant {
		v.Delta = formatPct(v.DeltaPct)
	} else {
		v.Delta = "~"
	}
	tooFew := v.MinP > cmp.Alpha
	if tooFew {
		c.note(v, tooFewNote(len(base.Passes), len(v.Passes), cmp.Alpha))
	}
	for _, w := range cmp.Warnings {
		if tooFew && strings.Contains(w.Error(), "samples to detect a difference") {
			continue // benchmath's shorter form of the note above
		}
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

func findCell(res results.Results, id cellID) (results.Cell, bool) {
	for _, c := range res.Cells {
		if res.Plan.RowKey(c.Row) == id.row && c.Threads == id.threads {
			return c, true
		}
	}
	return results.Cell{}, false
}

// passesByCell collects each cell's ops/sec per pass the way the run's
// median took them: one record per pass number, the first the run
// planned, so a resumed run's extra records do not count twice.
func passesByCell(o results.Opened) map[cellID][]float64 {
	limit := o.Results.Plan.Workload.Passes
	out := map[cellID][]float64{}
	seen := map[cellID]map[int]bool{}
	for _, p := range o.Passes {
		id := cellID{o.Results.Plan.RowKey(p.Row), p.Threads}
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
