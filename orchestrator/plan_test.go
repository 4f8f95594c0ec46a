package orchestrator

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestWorkloadRecordsEveryField: plan.json records the configuration
// as its embedded results.Workload. A field added to Config beside it
// would not be recorded, and --resume would get its zero back: this test
// names it, unless it is one of the run's own (the password, what it
// says on stderr), never recorded.
func TestWorkloadRecordsEveryField(t *testing.T) {
	neverRecorded := map[string]bool{"ServerPassword": true, "FromEnv": true, "Notes": true}
	for f := range reflect.TypeFor[plan.Config]().Fields() {
		if !f.Anonymous && !neverRecorded[f.Name] {
			t.Errorf("Config.%s is not in results.Workload: plan.json would not record it (move it there)", f.Name)
		}
	}
	// Every Workload field set to something other than its zero comes
	// back through the bundle's JSON.
	var c plan.Config
	v := reflect.ValueOf(&c.Workload).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(0.5)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			switch s.Index(0).Kind() {
			case reflect.String:
				s.Index(0).SetString("y")
			case reflect.Int:
				s.Index(0).SetInt(7)
			}
			f.Set(s)
		default:
			t.Fatalf("Workload.%s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	data, err := json.Marshal(c.Record())
	if err != nil {
		t.Fatal(err)
	}
	var w results.Workload
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	if back := plan.ConfigOf(w); !reflect.DeepEqual(back, c) {
		t.Errorf("ConfigOf(Record()) through JSON: got %+v, want %+v", back, c)
	}
}
