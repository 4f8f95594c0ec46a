// Package ladder is the ladder (--ladder): it measures the reference's
// four layers on one data dir, record shape and backend, so that a gap
// can be located: RESP ≤ KV ≤ Device ≤ fio on the native device, and on
// localmemory RESP ≤ KV ≤ Device with the untiered in-memory server on
// top (top.go). Each layer gives ops/s, its share of the layer below
// (the top's reads the other way) and CPU µs per op; the largest drop is
// named.
//
// The ladder reaches the run only through Env, which the facade hands
// to Run, and says in Part what it supports; it imports nothing of the
// facade and no other step.
package ladder
