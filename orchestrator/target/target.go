// Package target holds where a row's server answers, and how it comes to
// answer: one server, or the nodes of a cluster (the shards the run
// starts, or the masters of an external cluster). Every step after the
// start — the owner proof, the load check, the sampled GETs, the counters
// around a pass — walks the nodes the same way, whoever started them;
// only the client's routing (Cluster) and the shape of the record
// (per-node figures for a cluster) depend on how many there are.
//
// The sources: Own starts a fresh server of the row's catalogue entry
// (package sut) on a wiped data dir, or the row's shards as one static
// cluster (shards.go), per row; External is the server at --server-addr,
// proven by Attach before the run creates anything. Servers is the
// servers dimension (--server, --server-cmd, …), localauth.go the
// password the run gives the servers it starts on this machine.
//
// Invariants: a Server is returned only once each of its nodes answered
// and its pid was proven to own the node's socket; whatever a failed
// start started is stopped before the error is returned; the bundle
// never holds the password, only the name of the file it is in.
// This package imports nothing above it: what only the run knows (the
// driver, the TLS of a row, the preflight where the server runs) comes
// through Env.
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
