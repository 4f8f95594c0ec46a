package results

import (
	"fmt"
	"strings"
)

// RowKey is everything that tells one row of a run from another, within a
// bundle and across bundles: two rows with equal keys measured the same
// set-up and may be set side by side; rows whose keys differ never
// collapse into one. A field added to Row that makes a new kind of row
// gets a field here too, so that readers keyed by RowKey keep it apart
// without a change of their own.
type RowKey struct {
	// Scenario is the reference's server set-up (storage, memory,
	// localmemory); a bundle older than scenarios is storage.
	Scenario string `json:"scenario"`
	Backend  string `json:"backend"`
	Pin      string `json:"pin"`
	// Batch is the row's own -b (scenario 3's rows); 0 when the row takes
	// the run's --batch, which is a workload flag, not a row.
	Batch int `json:"batch,omitempty"`
	// Shards is the number of servers of a --shards row; 0 for one server
	// (a --shards 1 row is one server too).
	Shards int `json:"shards,omitempty"`
	// Hosts names the server host and the client hosts of a run across
	// hosts ("a <- b,c"); "" on one machine.
	Hosts string `json:"hosts,omitempty"`
	// Server is the row's server when it is not tierbench's own (Row.Server
	// "" or OwnServer, both ""), so a bundle from before servers and one
	// that sets tierbench beside Redis key tierbench's rows alike.
	Server string `json:"server,omitempty"`
	// Memory is the --memory of a memory-tier sweep's row; "" otherwise.
	Memory string `json:"memory,omitempty"`
	// ReadCache is the --readcache-memory of a read-cache sweep's row.
	ReadCache string `json:"readcache,omitempty"`
	// TLS is a row over TLS; false is plain TCP.
	TLS bool `json:"tls,omitempty"`
}

// String is the key as one line, "localmemory/localmemory/none/b=256".
func (k RowKey) String() string {
	s := k.Scenario + "/" + k.Backend + "/" + k.Pin
	if k.Batch > 0 {
		s += fmt.Sprintf("/b=%d", k.Batch)
	}
	if k.Shards > 1 {
		s += fmt.Sprintf("/shards=%d", k.Shards)
	}
	if k.Hosts != "" {
		s += "/hosts=" + k.Hosts
	}
	if k.Server != "" {
		s += "/server=" + k.Server
	}
	if k.Memory != "" {
		s += "/memory=" + k.Memory
	}
	if k.ReadCache != "" {
		s += "/readcache=" + k.ReadCache
	}
	if k.TLS {
		s += "/tls"
	}
	return s
}

// RowKey is row's RowKey in the run plan describes.
func (p Plan) RowKey(row Row) RowKey {
	k := RowKey{Scenario: p.Workload.ScenarioName(), Backend: row.Backend, Pin: row.Pin, Batch: row.Batch, Memory: row.Memory, ReadCache: row.ReadCache, TLS: row.TLS}
	if row.Shards > 1 {
		k.Shards = row.Shards
	}
	if row.Server != OwnServer {
		k.Server = row.Server
	}
	if h := p.Hosts; h != nil {
		names := make([]string, len(h.Clients))
		for i, c := range h.Clients {
			names[i] = c.Name
		}
		k.Hosts = h.Server.Name + " <- " + strings.Join(names, ",")
	}
	return k
}
