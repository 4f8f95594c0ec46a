package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/report/reporttest"
	"github.com/tierbench/tierbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The bundles under testdata/bundles are real quick runs of this machine
// (process runtime, libaio and uring without pinning, t=8,32, 5 passes,
// 700 000 keys): base and base-again at -b 256, batch4 at -b 4 by a
// binary stamped with its VCS revision, run in the order base, batch4,
// base-again on a machine shared with other work.
const (
	base      = "testdata/bundles/base"
	batch4    = "testdata/bundles/batch4"
	baseAgain = "testdata/bundles/base-again"
)

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		paths  []string
		json   bool
		golden string
	}{
		{"markdown", []string{base, baseAgain, batch4}, false, "three.md"},
		{"json", []string{base, baseAgain, batch4}, true, "three.json"},
		{"markdown of results.json paths", []string{base + "/results.json", batch4 + "/results.json"}, false, "two.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bundles, err := Load(tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compare(bundles, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if tt.json {
				err = c.WriteJSON(&got)
			} else {
				err = c.WriteMarkdown(&got)
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "golden", tt.golden), got.Bytes())
		})
	}
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	testenv.MustMatchGolden(t, path, got, *update)
}

// TestRealChangeHasASign checks the statistics on the real bundles: -b 4
// keeps 32 or 128 GETs in flight instead of 2048 or 8192, a change the
// test must call significant with the sign of the medians' difference.
func TestRealChangeHasASign(t *testing.T) {
	c := mustCompare(t, Options{}, base, batch4)
	significant := 0
	for _, cell := range c.Scenarios[0].Cells {
		v, b := cell.Values[1], cell.Values[0]
		if !v.Compared {
			t.Errorf("%s/%s t=%d: got not compared, want compared", cell.Backend, cell.Pin, cell.Threads)
			continue
		}
		if v.Significant {
			significant++
			wantSign := "+"
			if v.Median < b.Median {
				wantSign = "-"
			}
			if !strings.HasPrefix(v.Delta, wantSign) || !strings.HasSuffix(v.Delta, " %") {
				t.Errorf("%s t=%d: got delta %q for medians %.0f → %.0f, want %s… %%", cell.Backend, cell.Threads, v.Delta, b.Median, v.Median, wantSign)
			}
			if v.P > c.Alpha {
				t.Errorf("%s t=%d: got significant with p=%g > α=%g", cell.Backend, cell.Threads, v.P, c.Alpha)
			}
		} else if v.Delta != "~" {
			t.Errorf("%s t=%d: got delta %q at p=%g, want ~", cell.Backend, cell.Threads, v.Delta, v.P)
		}
	}
	if significant == 0 {
		t.Errorf("got no significant cell between -b 256 and -b 4, want at least one")
	}
}

// TestStatistics runs the decision on passes built for it: the same
// values on both sides are noise, two separated groups of five are a
// change, and two passes a side can never be significant at α = 0.05.
func TestStatistics(t *testing.T) {
	tests := []struct {
		name            string
		a, b            []float64
		wantSignificant bool
		wantNote        string
	}{
		{"same passes", []float64{100, 104, 98, 101, 103}, []float64{101, 98, 104, 103, 100}, false, ""},
		{"separated", []float64{100, 104, 98, 101, 103}, []float64{150, 149, 155, 151, 152}, true, ""},
		{"separated downwards", []float64{100, 104, 98, 101, 103}, []float64{50, 49, 55, 51, 52}, true, ""},
		{"two passes a side", []float64{100, 101}, []float64{200, 201}, false, "2 against 2 passes: the smallest p the Mann–Whitney U test can give is 0.333 (two-sided, no ties), above α = 0.05, so no difference can be significant however large; 4 against 4 passes can reach p = 0.029 (or 2 against 8: p = 0.044); run --passes 4 or more on both sides"},
		{"three passes a side", []float64{100, 101, 102}, []float64{200, 201, 202}, false, "3 against 3 passes: the smallest p the Mann–Whitney U test can give is 0.100 (two-sided, no ties), above α = 0.05, so no difference can be significant however large; 4 against 4 passes can reach p = 0.029 (or 3 against 5: p = 0.036); run --passes 4 or more on both sides"},
		{"four passes a side", []float64{100, 101, 102, 103}, []float64{200, 201, 202, 203}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compare([]Bundle{synthetic("a", tt.a), synthetic("b", tt.b)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			v := c.Scenarios[0].Cells[0].Values[1]
			if v.Significant != tt.wantSignificant {
				t.Errorf("got significant %v (p=%g), want %v", v.Significant, v.P, tt.wantSignificant)
			}
			wantDelta := "~"
			if tt.wantSignificant {
				wantDelta = formatPct(100 * (median(tt.b)/median(tt.a) - 1))
			}
			if v.Delta != wantDelta {
				t.Errorf("got delta %q, want %q", v.Delta, wantDelta)
			}
			var notes []string
			for _, n := range v.Notes {
				notes = append(notes, c.Notes[n])
			}
			if tt.wantNote != "" && !slices.Contains(notes, tt.wantNote) {
				t.Errorf("got notes %q, want %q among them", notes, tt.wantNote)
			}
			if tt.wantNote == "" && len(notes) > 0 {
				t.Errorf("got notes %q, want none", notes)
			}
			var md bytes.Buffer
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if tt.wantNote != "" && !strings.Contains(md.String(), "¹ "+tt.wantNote) {
				t.Errorf("got Markdown without the footnote %q:\n%s", "¹ "+tt.wantNote, md.String())
			}
		})
	}
}

// TestQuickProfilePasses keeps only two passes of each real bundle, as
// the quick profile runs: nothing is significant and the note says why.
func TestQuickProfilePasses(t *testing.T) {
	twoPasses := func(plan map[string]any) { plan["config"].(map[string]any)["Passes"] = 2 }
	a := copyBundle(t, base, twoPasses, nil)
	b := copyBundle(t, batch4, twoPasses, nil)
	c := mustCompare(t, Options{}, a, b)
	for _, cell := range c.Scenarios[0].Cells {
		v := cell.Values[1]
		if len(v.Passes) != 2 || v.Delta != "~" || len(v.Notes) != 1 || !strings.HasPrefix(c.Notes[v.Notes[0]], "2 against 2 passes: the smallest p the Mann–Whitney U test can give is 0.333") {
			t.Errorf("%s t=%d: got passes %v, delta %q, notes %v of %q; want 2 passes, ~ and the too-few-samples note", cell.Backend, cell.Threads, v.Passes, v.Delta, v.Notes, c.Notes)
		}
	}
}

func TestRefusals(t *testing.T) {
	setConfig := func(key string, v any) func(map[string]any) {
		return func(plan map[string]any) { plan["config"].(map[string]any)[key] = v }
	}
	tests := []struct {
		name    string
		edit    func(map[string]any)
		cells   func([]byte) []byte
		wantIs  error
		wantErr string
	}{
		{name: "newer plan schema", edit: func(plan map[string]any) { plan["schema_version"] = results.SchemaVersion + 1 },
			wantIs: results.ErrNewerSchema, wantErr: fmt.Sprintf("schema_version %d is newer than this tierbench's %d", results.SchemaVersion+1, results.SchemaVersion)},
		{name: "newer cells schema", cells: func(b []byte) []byte {
			newer := fmt.Sprintf(`"schema_version":%d`, results.SchemaVersion+1)
			return regexp.MustCompile(`"schema_version":\d+`).ReplaceAll(b, []byte(newer))
		}, wantErr: fmt.Sprintf("cells.jsonl line 1: schema_version %d is newer than this tierbench's %d", results.SchemaVersion+1, results.SchemaVersion)},
		{name: "dbsize", edit: setConfig("DBSize", 800000), wantIs: ErrIncomparable, wantErr: "--dbsize 700000 in base, 800000 in "},
		{name: "value length", edit: setConfig("ValueLength", 64), wantIs: ErrIncomparable, wantErr: "record size 16+96 B in base, 16+64 B in "},
		{name: "key length", edit: setConfig("KeyLength", 24), wantIs: ErrIncomparable, wantErr: "record size 16+96 B in base, 24+96 B in "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := copyBundle(t, batch4, tt.edit, tt.cells)
			bundles, err := Load([]string{base, other})
			if err == nil {
				_, err = Compare(bundles, Options{})
			}
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %q, want it to contain %q", err, tt.wantErr)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("got error %v, want errors.Is %v", err, tt.wantIs)
			}
		})
	}
}

func TestForceNamesTheDifference(t *testing.T) {
	other := copyBundle(t, batch4, func(plan map[string]any) { plan["config"].(map[string]any)["DBSize"] = 800000 }, nil)
	c := mustCompare(t, Options{Force: true}, base, other)
	want := "--dbsize 700000 in base, 800000 in " + filepath.Base(other)
	if !slices.Contains(c.Forced, want) {
		t.Errorf("got forced %q, want %q", c.Forced, want)
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**Compared with --force although the workloads differ: "+want+".**") {
		t.Errorf("got Markdown without the bold --force line:\n%s", md.String())
	}
	if i := slices.IndexFunc(c.Workload, func(d Difference) bool { return d.Field == "--dbsize" }); i < 0 {
		t.Errorf("got workload differences %v, want --dbsize among them", c.Workload)
	}
}

// TestHostDifferences edits fingerprints the way another host would
// differ (the machine cannot boot a second kernel for a test) and checks
// that exactly the edited fields are listed, and a bundle without a
// fingerprint shows as such.
func TestHostDifferences(t *testing.T) {
	other := copyBundleFile(t, batch4, "fingerprint.json", func(fp map[string]any) {
		fp["kernel"] = "6.1.0-28-amd64"
		fp["microcode"] = "0x2b000603"
		fp["transparent_hugepages"] = "always"
		fp["aio"].(map[string]any)["aio_max_nr"] = 1048576
		fp["vulnerabilities"].(map[string]any)["retbleed"] = "Mitigation: IBRS"
		disk := fp["storage"].(map[string]any)["disks"].([]any)[0].(map[string]any)
		disk["model"] = "SAMSUNG MZQL23T8HCLS"
		disk["firmware_rev"] = "GDC5902Q"
		fp["docker"] = nil
	})
	none := copyBundleFile(t, base, "fingerprint.json", nil)
	if err := os.WriteFile(filepath.Join(none, "fingerprint.json"), []byte("null\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seal(t, none)
	c := mustCompare(t, Options{}, base, other, none)
	var fields []string
	for _, d := range c.Host {
		fields = append(fields, d.Field)
		if d.Values[2] != noFingerprint {
			t.Errorf("%s: got %q for the bundle without fingerprint, want %q", d.Field, d.Values[2], noFingerprint)
		}
	}
	// Every field differs from the bundle without a fingerprint; the
	// edited ones also between the first two.
	var edited []string
	for _, d := range c.Host {
		if d.Values[0] != d.Values[1] {
			edited = append(edited, d.Field)
		}
	}
	wantEdited := []string{"microcode", "kernel", "disk model", "disk firmware", "fs.aio-max-nr", "transparent hugepages", "Docker", "tierbench version", "VCS revision", "vulnerability retbleed"}
	if !slices.Equal(edited, wantEdited) {
		t.Errorf("got fields differing between base and the edited copy %q, want %q", edited, wantEdited)
	}
	i := slices.IndexFunc(c.Host, func(d Difference) bool { return d.Field == "Docker" })
	if i < 0 || c.Host[i].Values[1] != "unreachable" {
		t.Errorf("got Docker difference %v, want the edited copy's engine unreachable", c.Host)
	}
	if len(fields) < len(hostFields) {
		t.Errorf("got %d host differences with a missing fingerprint, want every one of the %d fields", len(fields), len(hostFields))
	}
}

func TestLoneResultsAndExcludedCells(t *testing.T) {
	lone := filepath.Join(t.TempDir(), "lone")
	if err := os.MkdirAll(lone, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(batch4, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lone, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Libaio t=8's first pass read next to nothing from the device: the
	// cell is memory-served, judged from cells.jsonl as the run judges it.
	excluded := copyBundle(t, batch4, nil, func(b []byte) []byte {
		re := regexp.MustCompile(`("pass":1,[^\n]*?"read_bytes":)\d+`)
		loc := re.FindSubmatchIndex(b)
		return slices.Concat(b[:loc[3]], []byte("0"), b[loc[1]:])
	})
	bundles, err := Load([]string{base, lone})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(bundles, Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "lone is not verified: no SHA256SUMS") {
		t.Fatalf("got %v, want the lone results.json refused as unverified", err)
	}
	c := mustCompare(t, Options{Unverified: true}, base, lone, excluded)
	first := c.Scenarios[0].Cells[0]
	lv, ev := first.Values[1], first.Values[2]
	if !lv.Compared || lv.Stat != "" || len(lv.Notes) != 1 || !strings.HasPrefix(c.Notes[lv.Notes[0]], "no passes to test") {
		t.Errorf("lone results.json: got %+v with notes %q, want a median-only delta and the no-passes note", lv, c.Notes)
	}
	if lv.Delta != formatPct(lv.DeltaPct) {
		t.Errorf("lone results.json: got delta %q, want %q", lv.Delta, formatPct(lv.DeltaPct))
	}
	if ev.Compared || ev.Excluded != "memory-served" || len(ev.Notes) != 1 {
		t.Errorf("excluded cell: got %+v, want not compared, marked memory-served, with one note", ev)
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "(memory-served) | —") || !strings.Contains(md.String(), " K † | ") {
		t.Errorf("got Markdown without the excluded cell's mark and dash:\n%s", md.String())
	}
}

func TestLoadNeedsTwoBundles(t *testing.T) {
	for _, paths := range [][]string{nil, {base}} {
		if _, err := Load(paths); !errors.Is(err, ErrUsage) {
			t.Errorf("Load(%q): got %v, want ErrUsage", paths, err)
		}
	}
	if _, err := Load([]string{base, "testdata/no-such-bundle"}); err == nil || !strings.Contains(err.Error(), "no-such-bundle") {
		t.Errorf("Load of a missing bundle: got %v, want an error naming it", err)
	}
	bundles, err := Load([]string{base, base})
	if err != nil {
		t.Fatal(err)
	}
	if bundles[0].Name != "base" || bundles[1].Name != "base#2" {
		t.Errorf("got names %q, %q, want base, base#2", bundles[0].Name, bundles[1].Name)
	}
	// Two runs written to out/ in different folders are told apart by
	// their folders.
	top := t.TempDir()
	for _, d := range []string{"q1/out", "q2/out"} {
		if err := os.CopyFS(filepath.Join(top, d), os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
	}
	bundles, err = Load([]string{filepath.Join(top, "q1/out"), filepath.Join(top, "q2/out")})
	if err != nil {
		t.Fatal(err)
	}
	if bundles[0].Name != "q1/out" || bundles[1].Name != "q2/out" {
		t.Errorf("got names %q, %q, want q1/out, q2/out", bundles[0].Name, bundles[1].Name)
	}
}

func TestDistinctNames(t *testing.T) {
	for _, tc := range []struct {
		dirs []string
		want []string
	}{
		{[]string{"/r/a", "/r/b"}, []string{"a", "b"}},
		{[]string{"/q1/out", "/q3/out"}, []string{"q1/out", "q3/out"}},
		{[]string{"/x/q1/out", "/y/q1/out", "/z/q2/out"}, []string{"x/q1/out", "y/q1/out", "q2/out"}},
		{[]string{"/a/out", "/b/a/out"}, []string{"a/out", "b/a/out"}},
		{[]string{"/r/out", "/r/out/", "/r/other"}, []string{"out", "out#2", "other"}},
		{[]string{"/out", "/out"}, []string{"out", "out#2"}},
	} {
		if got := distinctNames(tc.dirs); !slices.Equal(got, tc.want) {
			t.Errorf("distinctNames(%q): got %q, want %q", tc.dirs, got, tc.want)
		}
	}
}

func mustCompare(t *testing.T, opts Options, paths ...string) *Comparison {
	t.Helper()
	bundles, err := Load(paths)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(bundles, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// copyBundle copies a sealed testdata bundle, applies editPlan to its
// decoded plan.json and cells to its cells.jsonl, and renders and seals
// the copy as a run that measured that would have; one that no tierbench
// can render (a newer schema) is sealed as it is.
func copyBundle(t *testing.T, src string, editPlan func(map[string]any), cells func([]byte) []byte) string {
	t.Helper()
	dst := copyBundleFile(t, src, "plan.json", editPlan)
	if cells != nil {
		p := filepath.Join(dst, "cells.jsonl")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, cells(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := report.Render(dst); err != nil {
		seal(t, dst)
	}
	return dst
}

// copyBundleFile copies a sealed testdata bundle, applies edit to one of
// its JSON files and seals the copy as it then is, as a writer other
// than this tierbench would.
func copyBundleFile(t *testing.T, src, name string, edit func(map[string]any)) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src)+"-copy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return dst
	}
	p := filepath.Join(dst, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	seal(t, dst)
	return dst
}

func seal(t *testing.T, dir string) {
	t.Helper()
	if err := results.Seal(dir, nil); err != nil {
		t.Fatal(err)
	}
}

// synthetic is a one-cell bundle with the given passes.
func synthetic(name string, passes []float64) Bundle {
	row := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	o := results.Opened{Dir: name}
	o.Results.Schema = results.SchemaVersion
	o.Results.Plan.Workload.Passes = len(passes)
	o.Results.Cells = []results.Cell{{Row: row, Threads: 8, Passes: len(passes), Median: median(passes)}}
	for i, v := range passes {
		o.Passes = append(o.Passes, results.PassRecord{Kind: "pass", Row: row, Threads: 8, Pass: i + 1, OpsPerSec: v})
	}
	return Bundle{Name: name, Opened: o}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// FuzzCompare feeds arbitrary results.json and fingerprint.json bytes
// as a second bundle beside a real one: Compare either refuses them with an error or
// writes both documents, and never panics.
func FuzzCompare(f *testing.F) {
	for _, dir := range []string{base, batch4} {
		r, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err != nil {
			f.Fatal(err)
		}
		fp, err := os.ReadFile(filepath.Join(dir, "fingerprint.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(r, fp)
	}
	f.Add([]byte(`{"schema_version":1,"cells":[{"row":{},"threads":-1,"passes":1}]}`), []byte("null"))
	f.Add([]byte(`{}`), []byte(`{"storage":{"disks":[{}]},"vulnerabilities":{"x":"y"}}`))
	f.Fuzz(func(t *testing.T, results, fingerprint []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "results.json"), results, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "fingerprint.json"), fingerprint, 0o644); err != nil {
			t.Fatal(err)
		}
		compareLoaded(t, base, dir)
	})
}

// FuzzLoadAll feeds arbitrary scenarios.json bytes as the top of a
// --scenario all bundle whose one scenario directory is a real bundle:
// Load either refuses it with an error or Compare writes both documents,
// and neither panics.
func FuzzLoadAll(f *testing.F) {
	f.Add([]byte(`{"schema_version":2,"scenario":"all","scenarios":[{"scenario":"storage","dir":"storage"}]}`))
	f.Add([]byte(`{"schema_version":2,"scenarios":[{"scenario":"memory","dir":"gone","error":"it failed"},{"scenario":"storage","dir":"storage"}]}`))
	f.Add([]byte(`{"schema_version":99,"scenarios":[]}`))
	f.Add([]byte(`{"scenarios":[{"scenario":"x","dir":"../storage"}]}`))
	f.Fuzz(func(t *testing.T, index []byte) {
		top := t.TempDir()
		if err := os.CopyFS(filepath.Join(top, "storage"), os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, "scenarios.json"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		compareLoaded(t, base, top)
	})
}

// compareLoaded compares the bundles at paths with --force --unverified when they load:
// Compare must not fail then, and both documents must be written.
func compareLoaded(t *testing.T, paths ...string) {
	bundles, err := Load(paths)
	if err != nil {
		return
	}
	c, err := Compare(bundles, Options{Force: true, Unverified: true})
	if err != nil {
		t.Fatalf("Compare with --force --unverified: got %v, want no error once both bundles load", err)
	}
	var out bytes.Buffer
	if err := c.WriteMarkdown(&out); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
}

// TestGate judges built passes: a cell significantly slower by more than
// the threshold fails; one slower by less, or faster, passes; and three
// passes a side can fail nothing, which the gate counts and says.
func TestGate(t *testing.T) {
	five := []float64{100, 101, 102, 103, 104}
	scaled := func(xs []float64, f float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * f
		}
		return out
	}
	tests := []struct {
		name       string
		a, b       []float64
		pct        float64
		wantFailed bool
		wantBlind  int
		wantText   string
	}{
		{"20 % slower, gate 5", five, scaled(five, 0.8), 5, true, 0, "FAIL: 1 cell(s) significantly slower than `a` by more than 5 %: storage Uring no pin t=8 in `b` -20.0 % (p=0.008)."},
		{"20 % slower, gate 25", five, scaled(five, 0.8), 25, false, 0, "pass: no cell is significantly slower than `a` by more than 25 %."},
		{"20 % faster", five, scaled(five, 1.2), 5, false, 0, "pass: "},
		{"half as fast, 3 passes a side", five[:3], scaled(five[:3], 0.5), 5, false, 1, "no verdict: none of the 1 compared cells could fail the gate whatever its delta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compare([]Bundle{synthetic("a", tt.a), synthetic("b", tt.b)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			g := c.Judge(tt.pct)
			if g.Failed != tt.wantFailed || g.Blind != tt.wantBlind {
				t.Errorf("got failed %v, blind %d; want %v, %d (%+v)", g.Failed, g.Blind, tt.wantFailed, tt.wantBlind, g)
			}
			if got := g.Summary("a"); !strings.Contains(got, tt.wantText) {
				t.Errorf("got summary %q, want it to contain %q", got, tt.wantText)
			}
			var js bytes.Buffer
			if err := c.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var doc struct{ Gate *Gate }
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Gate == nil || doc.Gate.Failed != tt.wantFailed || len(doc.Gate.Regressions) != len(g.Regressions) {
				t.Errorf("got JSON gate %+v (%v), want the verdict carried", doc.Gate, err)
			}
		})
	}
}

// TestMinimumP checks the smallest two-sided p of the Mann–Whitney U test
// against the exact count 2 / C(n1+n2, n1).
func TestMinimumP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{{2, 2, 2.0 / 6}, {3, 3, 2.0 / 20}, {3, 4, 2.0 / 35}, {3, 5, 2.0 / 56}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 1, 1}, {0, 3, 1}}
	for _, tt := range tests {
		if got := minTwoSidedP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("minTwoSidedP(%d, %d): got %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
	if other, both := passesNeeded(3, 0.05); other != 5 || both != 4 {
		t.Errorf("passesNeeded(3, 0.05): got %d, %d; want 5 against 3, 4 against 4", other, both)
	}
}

// TestHTMLInChromium opens compare's page of two real bundles, the gate
// on, in headless Chromium behind a recording proxy: a screenshot, every
// median and delta of the table in the page's text, a chart inline, the
// gate's verdict, and no request.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	c := mustCompare(t, Options{}, base, batch4)
	c.Judge(5)
	page := filepath.Join(t.TempDir(), "compare.html")
	if err := c.WriteHTMLFile(page); err != nil {
		t.Fatal(err)
	}
	got := reporttest.Browse(t, page)
	if len(got.Screenshot) < 1000 || !bytes.HasPrefix(got.Screenshot, []byte("\x89PNG")) {
		t.Errorf("got a screenshot of %d bytes, want a PNG", len(got.Screenshot))
	}
	if len(got.Requests) > 0 {
		t.Errorf("got requests %q, want none", got.Requests)
	}
	for _, cell := range c.Scenarios[0].Cells {
		for i, v := range cell.Values {
			want := []string{medianText(v)}
			if i > 0 {
				want = append(want, html.EscapeString(v.Delta+" ("+v.Stat+")"))
			}
			for _, w := range want {
				if !regexp.MustCompile(`<td[^>]*>` + regexp.QuoteMeta(w)).MatchString(got.DOM) {
					t.Errorf("%s t=%d: the page's table lacks %q", cell.Backend, cell.Threads, w)
				}
			}
		}
	}
	for _, want := range []string{`src="data:image/svg+xml;base64,`, "FAIL: 4 cell(s) significantly slower than"} {
		if !strings.Contains(got.DOM, want) {
			t.Errorf("the page's DOM lacks %q", want)
		}
	}
}

// TestIrregularEntriesAreNotRead: a bundle whose cells.jsonl is a pipe
// (a reader would block) or a link out of it is refused before anything
// reads it, even with --unverified.
func TestIrregularEntriesAreNotRead(t *testing.T) {
	for _, kind := range []string{"pipe", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			dir := copyBundleFile(t, batch4, "", nil)
			cells := filepath.Join(dir, "cells.jsonl")
			if err := os.Remove(cells); err != nil {
				t.Fatal(err)
			}
			var err error
			if kind == "pipe" {
				err = syscall.Mkfifo(cells, 0o644)
			} else {
				err = os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), cells)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = Load([]string{base, dir})
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "cells.jsonl is") || !strings.Contains(err.Error(), "even with --unverified") {
				t.Errorf("got %v, want a refusal naming cells.jsonl", err)
			}
		})
	}
}
