package orchestrator

import (
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestWorkloadRecordsEveryField: plan.json records the configuration
// through results.Workload, field by field. An exported Config field added without
// its Workload field would silently not be recorded, and --resume would
// get its zero back: this test names it. A field tagged record:"-" is
// the run's own (the password, what it says on stderr), never recorded.
func TestWorkloadRecordsEveryField(t *testing.T) {
	ct, wt := reflect.TypeFor[plan.Config](), reflect.TypeFor[results.Workload]()
	recorded := func(f reflect.StructField) bool { return f.IsExported() && f.Tag.Get("record") != "-" }
	for f := range ct.Fields() {
		if _, ok := wt.FieldByName(f.Name); !ok && recorded(f) {
			t.Errorf("Config.%s has no results.Workload field: plan.json would not record it", f.Name)
		}
	}
	// Every exported field set to something other than its zero comes
	// back (the others are the run's own, never recorded).
	var c plan.Config
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !recorded(v.Type().Field(i)) {
			continue
		}
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
			t.Fatalf("Config.%s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	if back := plan.ConfigOf(c.Record()); !reflect.DeepEqual(back, c) {
		t.Errorf("configOf(workload()): got %+v, want %+v", back, c)
	}
}
