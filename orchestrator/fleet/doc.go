// Package fleet runs a row's clients: on this machine (Local, the run's
// own preflight and bench handed in), or across hosts (Hosts,
// --server-host and --client-hosts): the server on one engine, the
// clients split over the client hosts, started at a start time handed to
// every client (bench --start-at), each measuring the same window; the
// cell's ops are the sum of the clients' ops inside it, online latencies
// the merge of their HdrHistograms (clients.go). Open sets a run up on
// its hosts (hosts.go): it connects to every engine, picks the address
// and port the server listens on and makes the run's password when that
// address is beyond loopback.
//
// Invariants: a phase's clients measure one shared window or the phase
// fails naming the host that missed it; every client's JSON is kept
// under hosts/<name>/clients/ and the merged online phase in
// hosts/latency.jsonl, never measured again on --resume. The hosts'
// preflights and the clients' flags are the run's, reached through Env;
// the package imports nothing of the facade.
package fleet
