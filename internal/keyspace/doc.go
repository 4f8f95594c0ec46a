// Package keyspace is the key space every benchmark layer shares: how key
// index k is spelled as a key, how the keys are split among load threads,
// and how a run draws key indices: a Dist (uniform, zipf with the hottest
// keys at the lowest indices, YCSB's hotspot and latest, memtier's
// gaussian) made into a Sampler for a key count, zero allocation per draw,
// its keys fixed by the caller's rng.
//
// The spelling is a contract across layers: `tierbench bench` (RESP) and
// `tierbench kv` (the store in-process) load and read the same keys only
// because both write key index k as its decimal digits, zero-padded on the
// left to the key length (index 42 at length 6 is "000042"). It lives here
// once so the two cannot drift apart.
//
// Values are not part of the contract: each layer keeps its own value
// pattern, chosen for what it must check (the RESP generator's values are
// valid INCR operands, for example).
package keyspace
