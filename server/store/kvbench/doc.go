// Package kvbench is the in-process benchmark of the tiered store, the KV
// layer of the stack RESP ≤ KV ≤ Device ≤ fio (the role of Garnet's
// KV.benchmark). It loads every key exactly once, then runs a random mix of
// reads, upserts, read-modify-writes and deletes for each thread count, each
// worker on its own Session with a batch of device reads kept in flight.
package kvbench
