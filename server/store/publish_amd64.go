//go:build amd64 && !race

package store

// publishWord stores w at p so that a reader that loads w there with
// atomic.LoadUint64 also sees every store this goroutine made before it
// (a release store). On amd64 a plain aligned 8-byte store is one: the
// processor keeps stores in program order (total store order) and the
// compiler keeps every store in the one memory chain, never moving one
// past another or past a call such as the copies that fill a record.
// atomic.StoreUint64 would add a full fence (XCHG), whose cost shows on
// the plain SET path; see BenchmarkProcessBatch.
//
// The race detector knows nothing of this ordering, so -race builds, and
// every other architecture, use the atomic store (publish_other.go).
func publishWord(p *uint64, w uint64) { *p = w }
