package reproduce

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/compare"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// variant is how a test's bundle differs from the reference bundle.
type variant struct {
	fio bool
	// plan changes the plan before it is written.
	plan func(*results.Plan)
	// ceiling replaces the fio baseline's best IOPS (8200000) in the
	// preflight: another host's disk.
	ceiling string
	// passes replaces the passes; nil keeps bundletest's.
	passes func(results.Plan) []results.PassRecord
}

// build writes and renders (seals) a bundle of v and loads it as
// run --reproduce does.
func build(t *testing.T, v variant) compare.Bundle {
	t.Helper()
	p := bundletest.ReferencePlan(bundletest.ReferenceWorkload())
	if v.plan != nil {
		v.plan(&p)
	}
	dir := bundletest.WriteBundle(t, p, v.fio)
	if v.ceiling != "" {
		pre := filepath.Join(dir, results.FilePreflight)
		b, _ := os.ReadFile(pre)
		b = bytes.ReplaceAll(b, []byte("8200000"), []byte(v.ceiling))
		os.WriteFile(pre, b, 0o644)
	}
	if v.passes != nil {
		_, loads, err := results.ReadCells(dir)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, results.FileCells))
		l, err := results.OpenCellsLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range loads {
			l.Append(r)
		}
		for _, r := range v.passes(p) {
			l.Append(r)
		}
		l.Close()
	}
	if _, err := report.Render(dir); err != nil {
		t.Fatal(err)
	}
	b, err := compare.LoadOne(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fivePasses is one row at t=8 with five passes of ops × the factors.
func fivePasses(ops float64, factors ...float64) func(results.Plan) []results.PassRecord {
	return func(p results.Plan) []results.PassRecord {
		var out []results.PassRecord
		for i, f := range factors {
			n := int64(ops * f * 12)
			out = append(out, results.PassRecord{Kind: "pass", Schema: results.SchemaVersion, Row: p.Rows[0], Threads: 8, Pass: i + 1, Batch: 1024,
				Ops: n, Seconds: 12, OpsPerSec: ops * f, Hits: n, ReadBytes: n * 512})
		}
		return out
	}
}

func oneRowFivePasses(p *results.Plan) {
	p.Rows = p.Rows[:1]
	p.Workload.Threads = []int{8}
	p.Workload.Passes = 5
}

// acrossHosts makes a plan's run one across Docker engines.
func acrossHosts(p *results.Plan) {
	p.Workload.ServerHost, p.Workload.ClientHosts = "a=unix:///run/a.sock", "b=unix:///run/b.sock"
}

func TestJudge(t *testing.T) {
	spread := []float64{0.98, 0.99, 1, 1.01, 1.02}
	for _, tc := range []struct {
		name     string
		original variant
		here     variant
		// want maps "row/t" to the verdict and a word of its evidence.
		want map[string][2]string
		// wantCounts are reproduced, differ, not comparable.
		wantCounts [3]int
		wantExit   int
	}{
		{
			name: "the same bundle", original: variant{fio: true}, here: variant{fio: true},
			want: map[string][2]string{
				"libaio pinned/8": {Reproduced, "+0.0 points"},
				"libaio none/8":   {NotComparable, "memory"},
				"uring pinned/64": {NotComparable, "kept out of the original"},
				"uring none/64":   {NotComparable, "not measured in the original"},
				"uring pinned/32": {Reproduced, "cannot make significant"},
			},
			wantCounts: [3]int{13, 0, 3}, wantExit: 3,
		},
		{
			name: "a disk with a lower ceiling, the same GET/s", original: variant{fio: true}, here: variant{fio: true, ceiling: "5000000"},
			want: map[string][2]string{
				"libaio pinned/8":  {Differs, "higher here"},
				"libaio pinned/32": {Differs, "beyond ±10"},
				"libaio none/8":    {NotComparable, "memory"},
			},
			wantCounts: [3]int{0, 13, 3}, wantExit: 1,
		},
		{
			name: "another dataset", original: variant{fio: true}, here: variant{fio: true, plan: func(p *results.Plan) { p.Workload.DBSize = 50_000_000 }},
			want: map[string][2]string{
				"libaio pinned/8": {NotComparable, "--dbsize 100000000 there, 50000000 here"},
			},
			wantCounts: [3]int{0, 0, 16}, wantExit: 4,
		},
		{
			name: "no ceiling here", original: variant{fio: true}, here: variant{},
			want: map[string][2]string{
				"libaio pinned/8": {NotComparable, "no fio ceiling on this host"},
			},
			wantCounts: [3]int{0, 0, 16}, wantExit: 4,
		},
		{
			name: "across hosts on both sides: no ceiling", original: variant{plan: acrossHosts}, here: variant{plan: acrossHosts},
			want: map[string][2]string{
				"libaio pinned/8": {NotComparable, "no fio ceiling on either host (run across hosts, whose image holds no fio)"},
			},
			wantCounts: [3]int{0, 0, 16}, wantExit: 4,
		},
		{
			name: "pinned on one node here", original: variant{fio: true}, here: variant{fio: true, plan: func(p *results.Plan) { p.Nodes = 1 }},
			want: map[string][2]string{
				"libaio pinned/8": {NotComparable, "pinned on 2 NUMA node(s) there"},
				"libaio none/32":  {Reproduced, "within ±10"},
			},
			wantCounts: [3]int{6, 0, 10}, wantExit: 3,
		},
		{
			name:     "five passes each, 5 % slower every pass: within the tolerance, but significant",
			original: variant{fio: true, plan: oneRowFivePasses, passes: fivePasses(4e6, spread...)},
			here:     variant{fio: true, plan: oneRowFivePasses, passes: fivePasses(3.8e6, spread...)},
			want: map[string][2]string{
				"libaio pinned/8": {Differs, "within ±10 but significant"},
			},
			wantCounts: [3]int{0, 1, 0}, wantExit: 1,
		},
		{
			name:     "five passes each, the same spread",
			original: variant{fio: true, plan: oneRowFivePasses, passes: fivePasses(4e6, spread...)},
			here:     variant{fio: true, plan: oneRowFivePasses, passes: fivePasses(4e6, 1.01, 0.98, 1.02, 1, 0.99)},
			want: map[string][2]string{
				"libaio pinned/8": {Reproduced, "do not differ significantly"},
			},
			wantCounts: [3]int{1, 0, 0}, wantExit: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Judge(build(t, tc.original), build(t, tc.here), Options{})
			got := map[string]Cell{}
			for _, c := range r.Cells {
				got[c.Row+"/"+strconv.Itoa(c.Threads)] = c
			}
			for k, w := range tc.want {
				c, ok := got[k]
				if !ok {
					t.Errorf("%s: no verdict; got cells %v", k, keys(got))
					continue
				}
				if c.Verdict != w[0] || !strings.Contains(c.Why, w[1]) {
					t.Errorf("%s: got %s (%s), want %s with %q", k, c.Verdict, c.Why, w[0], w[1])
				}
			}
			rep, diff, nc := r.Counts()
			if [3]int{rep, diff, nc} != tc.wantCounts {
				t.Errorf("got %d reproduced, %d differ, %d not comparable, want %v\n%s", rep, diff, nc, tc.wantCounts, r.Table())
			}
			if got := r.ExitCode(); got != tc.wantExit {
				t.Errorf("exit %d, want %d", got, tc.wantExit)
			}
		})
	}
}

func TestTolerance(t *testing.T) {
	o, h := build(t, variant{fio: true}), build(t, variant{fio: true, ceiling: "7000000"})
	// 8.2 M against 7 M: each share is 17 % higher here, 3 to 15 points.
	for _, tc := range []struct {
		tol  float64
		want int // cells that differ
	}{{50, 0}, {10, 9}, {1, 13}} {
		r := Judge(o, h, Options{Tolerance: tc.tol})
		if _, diff, _ := r.Counts(); diff != tc.want {
			t.Errorf("tolerance %g: got %d cells that differ, want %d\n%s", tc.tol, diff, tc.want, r.Table())
		}
	}
}

// The reproduction's files go into the bundle and its sums cover them;
// a bundle edited before is refused.
func TestWrite(t *testing.T) {
	o, h := build(t, variant{fio: true}), build(t, variant{fio: true})
	r := Judge(o, h, Options{})
	if err := r.Write(h.Opened.Dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(h.Opened.Dir, FileMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Hosts", "fio ceiling", "| verdict |", "**reproduced**", "**not comparable**"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("reproduction.md lacks %q", want)
		}
	}
	page, _ := os.ReadFile(filepath.Join(h.Opened.Dir, FileHTML))
	if !bytes.Contains(page, []byte("<table")) || bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
		t.Errorf("reproduction.html: want a table and no link out")
	}
	in, err := results.Check(h.Opened.Dir)
	if err != nil || !in.Holds() {
		t.Errorf("after Write: check %v, findings %v; want the sums to hold", err, in.Findings)
	}
	os.WriteFile(filepath.Join(h.Opened.Dir, results.FileTable), []byte("edited\n"), 0o644)
	if err := r.Write(h.Opened.Dir); err == nil || !strings.Contains(err.Error(), "does not match its sums") {
		t.Errorf("Write over an edited bundle: got %v, want a refusal", err)
	}
}

func keys(m map[string]Cell) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
