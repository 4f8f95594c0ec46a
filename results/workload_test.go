package results

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestWorkloadReadsOldPlans decodes the plan.json of bundles written by
// earlier tierbench versions (schema 1, when the run's configuration was
// written under its Go field names, and schema 2) and writes it again:
// every field the file holds must come back with the same name and value.
func TestWorkloadReadsOldPlans(t *testing.T) {
	for _, path := range []string{
		"../report/testdata/bundle-v1/plan.json",
		"../compare/testdata/bundles/base/plan.json",
	} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Config map[string]any `json:"config"`
		}
		var plan Plan
		if err := json.Unmarshal(raw, &file); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &plan); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		again, _ := json.Marshal(plan.Workload)
		var back map[string]any
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatal(err)
		}
		if len(file.Config) == 0 {
			t.Fatalf("%s: no config in the plan", path)
		}
		for k, v := range file.Config {
			if got, ok := back[k]; !ok || !reflect.DeepEqual(got, v) {
				t.Errorf("%s: config %q: got %v (present %v), want %v", path, k, got, ok, v)
			}
		}
	}
}

func TestRowKeyTellsRowsApart(t *testing.T) {
	storage := Plan{}
	lm := Plan{Workload: Workload{Scenario: ScenarioLocalMemory}}
	hosts := Plan{Hosts: &HostsPlan{Server: HostEndpoint{Name: "a"}, Clients: []HostEndpoint{{Name: "b"}, {Name: "c"}}}}
	row := Row{Backend: "uring", Pin: "none", Label: "no pin"}
	b256 := Row{Backend: "localmemory", Pin: "none", Batch: 256}
	b1024 := Row{Backend: "localmemory", Pin: "none", Batch: 1024}
	sh1, sh2 := row, row
	sh1.Shards, sh2.Shards = 1, 2
	tests := []struct {
		name string
		a, b RowKey
		same bool
	}{
		{"same row", storage.RowKey(row), storage.RowKey(row), true},
		{"label is not identity", storage.RowKey(row), storage.RowKey(Row{Backend: "uring", Pin: "none", Label: "other"}), true},
		{"-b 256 vs -b 1024", lm.RowKey(b256), lm.RowKey(b1024), false},
		{"1 vs 2 shards", storage.RowKey(sh1), storage.RowKey(sh2), false},
		{"1 shard is one server", storage.RowKey(sh1), storage.RowKey(row), true},
		{"scenario", storage.RowKey(b256), lm.RowKey(b256), false},
		{"hosts", storage.RowKey(row), hosts.RowKey(row), false},
	}
	for _, tt := range tests {
		if got := tt.a == tt.b; got != tt.same {
			t.Errorf("%s: %v == %v is %v, want %v", tt.name, tt.a, tt.b, got, tt.same)
		}
		if got := tt.a.String() == tt.b.String(); got != tt.same {
			t.Errorf("%s: %q == %q is %v, want %v", tt.name, tt.a, tt.b, got, tt.same)
		}
	}
	if got, want := lm.RowKey(b256).String(), "localmemory/localmemory/none/b=256"; got != want {
		t.Errorf("RowKey.String: got %q, want %q", got, want)
	}
	if got, want := hosts.RowKey(sh2).String(), "storage/uring/none/shards=2/hosts=a <- b,c"; got != want {
		t.Errorf("RowKey.String: got %q, want %q", got, want)
	}
}

// TestBatchOf: a row's own -b (a scenario's batch rows) wins over the run's.
func TestBatchOf(t *testing.T) {
	w := Workload{Batch: 1024}
	for _, tc := range []struct {
		row  Row
		want int
	}{{Row{Backend: "uring"}, 1024}, {Row{Backend: ScenarioMemory, Batch: 64}, 64}} {
		if got := w.BatchOf(tc.row); got != tc.want {
			t.Errorf("BatchOf(%+v): got %d, want %d", tc.row, got, tc.want)
		}
	}
}
