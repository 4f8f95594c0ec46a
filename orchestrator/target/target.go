// Package target holds where a row's server answers: one server, or the
// nodes of a cluster (the shards the run starts, or the masters of an
// external cluster). Every step after the start — the owner proof, the
// load check, the sampled GETs, the counters around a pass — walks the
// nodes the same way, whoever started them; only the client's routing
// (Cluster) and the shape of the record (per-node figures for a cluster)
// depend on how many there are.
package target

import (
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// Node is one server of a row's target.
type Node struct {
	// ID, Slots and Ranges are its cluster identity; empty for a server
	// that is not a cluster node.
	ID     string
	Addr   string
	Slots  int
	Ranges []slots.Range
	Keys   int64 // its DBSIZE after the load was verified
	// Probe reaches it and reads its process's counters where it runs;
	// Probe.Counts() says whether those can be read (its pid is known).
	Probe  rig.ServerProbe
	Proof  *results.OwnerProof // its pid, proven to own the socket at Addr
	Handle rig.ServerHandle    // nil for a server the run did not start
	Dir    string              // its data dir, for a server the run started
}

// Server is where one row's server answers: one node, or a cluster's.
type Server struct {
	Addr  string  // where clients connect: the first node
	Nodes []*Node // at least one
	// Cluster says the client routes keys by slot (--cluster-bench) and
	// the load is checked per node.
	Cluster bool
	// Handle stops everything the run started for the row; nil when it
	// started nothing.
	Handle rig.ServerHandle
	// UringProbe is the io_uring check of the preflight run where the
	// server runs, for a uring row.
	UringProbe string
	// Command is the server's command line as run ("" for one the run
	// did not start).
	Command string
	// ClientArgs are the flags every client of it takes besides the
	// address and the workload: TLS, a user and a password file; TLS says
	// it is reached over TLS.
	ClientArgs []string
	// NoAuth: the server runs without the run's password (a catalogue
	// server that cannot take it off its command line, or shards), so
	// its clients give none.
	NoAuth bool
	TLS    bool
}

// First is the node clients connect to.
func (t Server) First() *Node { return t.Nodes[0] }
