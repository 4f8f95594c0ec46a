package plan

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// TestChooseRuntime: the runtime a run on one machine starts its servers
// with, for each --runtime and what the rows need.
func TestChooseRuntime(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cfg           Config
		startsServers bool
		want          RuntimeChoice
		noteHas       string
	}{
		{"auto", Config{Workload: results.Workload{Runtime: RuntimeAuto}}, true, RuntimeChoice{Name: RuntimeDocker, Fallback: RuntimeProcess}, ""},
		{"docker", Config{Workload: results.Workload{Runtime: RuntimeDocker}}, true, RuntimeChoice{Name: RuntimeDocker}, ""},
		{"process", Config{Workload: results.Workload{Runtime: RuntimeProcess}}, true, RuntimeChoice{Name: RuntimeProcess}, ""},
		{"only clients", Config{Workload: results.Workload{Runtime: RuntimeDocker, ServerAddr: "127.0.0.1:6379"}}, false, RuntimeChoice{Name: RuntimeProcess}, ""},
		{"a program of this host", Config{Workload: results.Workload{Runtime: RuntimeAuto, Servers: []string{"redis"}}}, true, RuntimeChoice{Name: RuntimeProcess}, "--server-image runs it under Docker"},
		{"a program's image", Config{Workload: results.Workload{Runtime: RuntimeAuto, Servers: []string{"redis"}, ServerImage: "redis"}}, true, RuntimeChoice{Name: RuntimeDocker, Fallback: RuntimeProcess}, ""},
		{"shards under auto", Config{Workload: results.Workload{Runtime: RuntimeAuto, Shards: []int{1, 2}}}, true, RuntimeChoice{Name: RuntimeProcess}, "--shards 1,2 starts its shards as pinned processes"},
		{"shards under docker", Config{Workload: results.Workload{Runtime: RuntimeDocker, Shards: []int{2}}}, true, RuntimeChoice{Name: RuntimeProcess}, "--shards 2"},
	} {
		got := tc.cfg.ChooseRuntime(tc.startsServers)
		note := got.Note
		got.Note = ""
		if got != tc.want || !strings.Contains(note, tc.noteHas) || (tc.noteHas == "") != (note == "") {
			t.Errorf("%s: got %+v (note %q), want %+v with a note saying %q", tc.name, got, note, tc.want, tc.noteHas)
		}
	}
}
