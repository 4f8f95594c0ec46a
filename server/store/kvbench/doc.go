// Package kvbench is the in-process benchmark of the tiered store, the KV
// layer of the stack RESP ≤ KV ≤ Device ≤ fio (the role of Garnet's
// KV.benchmark). It loads every key exactly once, then runs a random mix of
// reads, upserts, read-modify-writes and deletes for each thread count, each
// worker on its own Session with a batch of device reads kept in flight.
//
// Keys are spelled and drawn by package internal/keyspace (key index k in
// decimal, zero-padded to the key length; uniform or exact zipf indices),
// the same keys `tierbench bench` sends over RESP, so the layers' figures
// are for the same key space.
package kvbench
