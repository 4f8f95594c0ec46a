package results_test

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

func TestParseFioCPU(t *testing.T) {
	good := `{"kind":"fio-cpu","schema_version":1,"row":{"backend":"libaio","pin":"pinned","label":"x"},"threads":8,"engine":"libaio","depth":97,"cpu_us_per_read":6.2}` + "\n"
	recs, err := results.ParseFioCPU([]byte(good + `{"kind":"engi`))
	if err != nil || len(recs) != 1 || recs[0].Engine != "libaio" || recs[0].Depth != 97 || recs[0].CPUMicrosPerRead != 6.2 {
		t.Fatalf("torn last line: got %+v, %v; want the first record", recs, err)
	}
	for _, in := range []string{
		`{"kind":"ceiling","schema_version":1}` + "\n",
		"nonsense\n" + good,
		`{"kind":"fio-cpu","schema_version":99}` + "\n",
	} {
		if _, err := results.ParseFioCPU([]byte(in)); err == nil || !strings.Contains(err.Error(), results.FileFioCPU) {
			t.Errorf("ParseFioCPU(%q): got %v, want an error naming %s", in, err, results.FileFioCPU)
		}
	}
}

func TestFioCPUFor(t *testing.T) {
	row := results.Row{Backend: "libaio", Pin: "pinned", Label: "x"}
	other := results.Row{Backend: "libaio", Pin: "none", Label: "y"}
	recs := []results.FioCPURecord{
		{Row: row, Threads: 8, FioCost: results.FioCost{Error: "fio: boom"}},
		{Row: row, Threads: 8, FioCost: results.FioCost{CPUMicrosPerRead: 6.2}},
		{Row: other, Threads: 32, FioCost: results.FioCost{CPUMicrosPerRead: 7}},
		{Row: row, Threads: 48},
	}
	for _, tc := range []struct {
		name    string
		row     results.Row
		threads int
		want    float64
	}{
		{"the one fio completed, not the failed one", row, 8, 6.2},
		{"another row's cell", row, 32, 0},
		{"no CPU figure", row, 48, 0},
		{"other row", other, 32, 7},
	} {
		got, ok := results.FioCPUFor(recs, tc.row, tc.threads)
		if got.CPUMicrosPerRead != tc.want || ok != (tc.want > 0) {
			t.Errorf("%s: got %.1f µs (%v), want %.1f", tc.name, got.CPUMicrosPerRead, ok, tc.want)
		}
	}
}

func FuzzParseFioCPU(f *testing.F) {
	f.Add([]byte(`{"kind":"fio-cpu","schema_version":1,"threads":8,"engine":"libaio","depth":97,"cpu_us_per_read":6.2}` + "\n"))
	f.Add([]byte("{\"kind\":\"fio-cpu\",\"schema_version\":1}\n{\"kind"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := results.ParseFioCPU(data)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Kind != "fio-cpu" || r.Schema > results.SchemaVersion {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
