package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRowServer: the server is part of a row's ID and key; tierbench's
// own server keys alike whether a row names it or, as before servers,
// leaves it out; a row without a server writes no server field, so old
// bundles read and write byte for byte as before.
func TestRowServer(t *testing.T) {
	plan := Plan{Workload: Workload{Scenario: ScenarioMemory}}
	own := Row{Backend: "memory", Pin: "none"}
	named := own
	named.Server = OwnServer
	redis := own
	redis.Server = "redis"
	for _, c := range []struct {
		row       Row
		id, key   string
		server    string
		writesKey bool
	}{
		{own, "memory/none", "memory/memory/none", "tierbench", false},
		{named, "memory/none/server=tierbench", "memory/memory/none", "tierbench", true},
		{redis, "memory/none/server=redis", "memory/memory/none/server=redis", "redis", true},
	} {
		if got := c.row.ID(); got != c.id {
			t.Errorf("%+v: ID got %s, want %s", c.row, got, c.id)
		}
		if got := plan.RowKey(c.row).String(); got != c.key {
			t.Errorf("%+v: RowKey got %s, want %s", c.row, got, c.key)
		}
		if got := c.row.ServerName(); got != c.server {
			t.Errorf("%+v: ServerName got %s, want %s", c.row, got, c.server)
		}
		b, _ := json.Marshal(c.row)
		if got := strings.Contains(string(b), `"server"`); got != c.writesKey {
			t.Errorf("%+v: JSON %s has a server field: got %v, want %v", c.row, b, got, c.writesKey)
		}
	}
	if plan.RowKey(own) != plan.RowKey(named) || plan.RowKey(own) == plan.RowKey(redis) {
		t.Errorf("keys: own %v, named %v, redis %v: want own = named ≠ redis", plan.RowKey(own), plan.RowKey(named), plan.RowKey(redis))
	}
}
