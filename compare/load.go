package compare

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// Bundle is one results bundle as compare reads it: one argument, one
// column of every table.
type Bundle struct {
	Name string // the column heading: the bundle directory's name
	// Opened is the bundle of one scenario; of a --scenario all bundle,
	// its first scenario's (whose fingerprint stands for the host).
	Opened results.Opened
	// Parts are the bundle's scenarios, each a bundle of its own: one for
	// a bundle of one scenario, each scenario of a --scenario all bundle.
	// Empty means Opened alone.
	Parts []Part
}

// Part is one scenario of a bundle and what the check of its checksums
// found.
type Part struct {
	Scenario string
	Opened   results.Opened
	// Tampered is the error of a bundle whose files or medians are not
	// the ones its sums recorded (results.ErrTampered); Compare refuses
	// it unless Options.Unverified.
	Tampered error
	// Unverified says why the part's sums vouch for less than all of it
	// (none, or results.json uncovered); "" when they vouch for it all.
	// Compare refuses it unless Options.Unverified.
	Unverified string
	// Missing is why a scenario of an all bundle has no bundle to read
	// (the run failed before it wrote one); Opened is then empty.
	Missing string
}

// parts is the bundle's scenarios.
func (b Bundle) parts() []Part {
	if len(b.Parts) > 0 {
		return b.Parts
	}
	return []Part{{Scenario: scenarioOf(b.Opened), Opened: b.Opened}}
}

// part is the bundle's part of scenario s; false when it has none.
func (b Bundle) part(s string) (Part, bool) {
	for _, p := range b.parts() {
		if p.Scenario == s && p.Missing == "" {
			return p, true
		}
	}
	return Part{}, false
}

// scenarioOf is the scenario a bundle measured: storage for a bundle
// from before scenarios.
func scenarioOf(o results.Opened) string {
	if o.Results.Scenario != "" {
		return o.Results.Scenario
	}
	return o.Results.Plan.Workload.ScenarioName()
}

// Load opens each path (a bundle directory, its results.json, or the top
// of a --scenario all bundle) and names the bundles by their directory,
// with as many of its parents as it takes to tell them apart (q1/out and
// q3/out, not out and out#2), and "#N" after a bundle given again. It
// checks every bundle against its sums as `tierbench report --verify`
// does, before reading it, and keeps what it found for Compare; the
// medians it reads are derived again from cells.jsonl, as the tests are,
// so both always come from the same passes.
func Load(paths []string) ([]Bundle, error) {
	if len(paths) < 2 {
		return nil, fmt.Errorf("%w: want at least two bundles, got %d", ErrUsage, len(paths))
	}
	bundles := make([]Bundle, 0, len(paths))
	dirs := make([]string, 0, len(paths))
	for _, p := range paths {
		b, dir, err := load(p)
		if err != nil {
			return nil, err // results' errors name the bundle's path
		}
		bundles = append(bundles, b)
		dirs = append(dirs, dir)
	}
	for i, name := range distinctNames(dirs) {
		bundles[i].Name = name
	}
	return bundles, nil
}

// distinctNames names each directory by its last path elements, the
// fewest that no other directory shares, so that a column heading says
// which run it is. The same directory given twice gets "#N" from its
// second time on.
func distinctNames(dirs []string) []string {
	full := make([]string, len(dirs))
	elems := make([][]string, len(dirs))
	for i, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		full[i] = filepath.ToSlash(filepath.Clean(d))
		elems[i] = strings.Split(strings.Trim(full[i], "/"), "/")
	}
	tail := func(i, k int) string {
		e := elems[i]
		return strings.Join(e[max(0, len(e)-k):], "/")
	}
	// clashes says another directory ends in the same k elements as i.
	clashes := func(i, k int) bool {
		for j := range dirs {
			if full[j] != full[i] && tail(j, k) == tail(i, k) {
				return true
			}
		}
		return false
	}
	names := make([]string, len(dirs))
	for i := range dirs {
		k := 1
		for k < len(elems[i]) && clashes(i, k) {
			k++
		}
		names[i] = tail(i, k)
	}
	seen := map[string]int{}
	for i, n := range names {
		seen[n]++
		if c := seen[n]; c > 1 {
			names[i] = fmt.Sprintf("%s#%d", n, c)
		}
	}
	return names
}

// load opens the bundle at path and returns it with its directory.
func load(path string) (Bundle, string, error) {
	if st, err := os.Stat(filepath.Join(path, results.FileScenarios)); err == nil && !st.IsDir() {
		b, err := loadAll(path)
		return b, path, err
	}
	part, err := openPart(path)
	if err != nil {
		return Bundle{}, "", err
	}
	dir := part.Opened.Dir
	return Bundle{Name: filepath.Base(filepath.Clean(dir)), Opened: part.Opened, Parts: []Part{part}}, dir, nil
}

// loadAll opens a --scenario all bundle scenario by scenario.
func loadAll(dir string) (Bundle, error) {
	index, err := results.ReadScenarioIndex(dir)
	if err != nil {
		return Bundle{}, err
	}
	// The top's sums cover scenarios.json and every scenario: what they
	// find holds against every part.
	top, err := results.CheckFiles(dir)
	if err != nil {
		return Bundle{}, err
	}
	b := Bundle{Name: filepath.Base(filepath.Clean(dir))}
	for _, e := range index.Scenarios {
		part, err := openPart(filepath.Join(dir, e.Dir))
		if err == nil && part.Tampered == nil && part.Unverified == "" {
			switch {
			case len(top.Findings) > 0:
				part.Tampered = fmt.Errorf("%w: %s: %s", results.ErrTampered, dir, strings.Join(top.Findings, "; "))
			case !top.Sealed:
				part.Unverified = fmt.Sprintf("no %s at the top of the all bundle: nothing vouches for its %s", results.FileSums, results.FileScenarios)
			}
		}
		switch {
		case err != nil && e.Error != "" && errors.Is(err, os.ErrNotExist):
			// The scenario failed before it wrote a bundle: nothing to read.
			part = Part{Missing: e.Error}
		case err != nil:
			return Bundle{}, fmt.Errorf("scenario %s: %w", e.Scenario, err)
		}
		part.Scenario = e.Scenario
		if part.Missing == "" && b.Opened.Dir == "" {
			b.Opened = part.Opened
		}
		b.Parts = append(b.Parts, part)
	}
	if len(b.Parts) == 0 {
		return Bundle{}, fmt.Errorf("%s lists no scenario", filepath.Join(dir, results.FileScenarios))
	}
	return b, nil
}

// openPart checks one scenario's bundle against its sums, then opens it
// and takes its cells from its passes. The check comes first and opens
// no file but regular ones, so a bundle whose cells.jsonl is a link or a
// pipe is refused before anything reads it.
func openPart(path string) (Part, error) {
	dir := path
	if filepath.Base(path) == results.FileResults {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = filepath.Dir(path)
		}
	}
	in, err := results.Check(dir)
	if err != nil {
		return Part{}, err
	}
	if len(in.Irregular) > 0 {
		return Part{}, fmt.Errorf("%w: %s: %s: refusing to read it even with --unverified", ErrTampered, dir, strings.Join(in.Irregular, "; "))
	}
	var p Part
	switch {
	case len(in.Findings) > 0:
		p.Tampered = fmt.Errorf("%w: %s: %s", results.ErrTampered, dir, strings.Join(in.Findings, "; "))
	case in.Legacy:
		p.Unverified = fmt.Sprintf("sealed before %s covered %s: its other files match the sums in %s, but nothing vouches for %s itself", results.FileSums, results.FileResults, results.FileResults, results.FileResults)
	case !in.Sealed:
		p.Unverified = fmt.Sprintf("no %s, and its %s records no sums: nothing vouches for any of its files", results.FileSums, results.FileResults)
	}
	o, err := results.Open(path)
	if err != nil {
		return Part{}, err
	}
	p.Scenario, p.Opened = scenarioOf(o), o
	if len(o.Passes) > 0 {
		// Medians, exclusions and the tests' passes from the same records:
		// cells.jsonl, judged as the run judged them.
		fails, err := results.ReadFailures(o.Dir)
		if err != nil {
			return Part{}, err
		}
		p.Opened.Results.Cells = results.Aggregate(o.Results.Plan, o.Passes, fails, o.Results.FioIOPS512)
	}
	return p, nil
}
