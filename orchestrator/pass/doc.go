// Package pass is a row's passes: the load of the dataset and its
// verification on every node of the row's target (verify.go), the GET
// phases of the cells with the server's device reads, CPU and store
// counters read around each (measure.go, nodes.go, mixes.go), the
// host's disk and CPU evidence around a phase (evidence.go), and the
// exact load check again after a mix that wrote (mixes.go).
//
// Invariants: a pass is judged by what was counted around it, never by
// the client's word alone, and a judged pass is appended to cells.jsonl
// whether it is kept in the table or out; a load's evidence is appended
// whatever the verification's verdict, and the load is refused
// (fault.ErrRefused) unless the loader's acknowledgements and each
// node's DBSIZE are exactly what --dbsize asks and a uniform sample of
// the keys answers values of the loaded length.
//
// The package reaches the run only through Env, which the facade
// implements; it imports nothing of the facade and no other step's
// package.
package pass
