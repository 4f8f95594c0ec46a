package plan

import (
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// TestFlagFieldsNameValues: every field a flag overrides is a value of
// Config (found through the embedded Workload), never a whole struct, so
// overriding one flag beside --plan can only set what that flag names.
func TestFlagFieldsNameValues(t *testing.T) {
	ct := reflect.TypeFor[Config]()
	for flag, fields := range FlagFields {
		for _, name := range fields {
			f, ok := ct.FieldByName(name)
			if !ok || f.Type.Kind() == reflect.Struct {
				t.Errorf("--%s names %q: got found %v, kind %v; want a value field of Config", flag, name, ok, f.Type)
			}
		}
	}
}

// TestOverrideSetsOnlyTheFlag: --workload beside a plan sets the mix and
// nothing else of it.
func TestOverrideSetsOnlyTheFlag(t *testing.T) {
	base := Config{Workload: results.Workload{DBSize: 1000, Threads: []int{8}, Mix: "ycsb-c"}}
	flags := Config{Workload: results.Workload{Mix: "ycsb-a"}}
	got, said, err := Override(base, flags, []string{"workload"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Mix != "ycsb-a" || got.DBSize != 1000 || len(got.Threads) != 1 || len(said) != 1 {
		t.Errorf("got mix %q, dbsize %d, threads %v, said %q; want ycsb-a, 1000, [8] and one sentence", got.Mix, got.DBSize, got.Threads, said)
	}
}
