package bench

import "math/rand/v2"

// keyRNG seeds the key stream of one thread of one cell for plan.sampler:
// the same seed and stream give the same keys, and mix64 spreads
// neighbouring stream numbers apart so threads draw independent keys. It is
// owned by one goroutine.
func keyRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, mix64(stream)))
}

// writeStream is XORed into the key stream of a cell whose every command
// writes (SET, MSET, INCR, DEL), so that it draws other keys than a read
// cell of the same seed and connections. Drawn alike, a GET cell run after
// a SET cell (or after bench --op MSET's cell that follows its load) read
// back exactly the keys just written, in the order they were written: on a
// log-structured store those records lie side by side at the log's tail,
// in its memory tier, and an in-memory tierbench server answered such a
// cell far faster than one of random keys. Read cells keep the streams
// they always had, so their keys for a seed do not change between
// versions.
const writeStream = 1 << 61

// writes reports whether o changes the store.
func (o opcode) writes() bool { return o == opSet || o == opMSet || o == opIncr || o == opDel }

// cellStream is the key stream of connection thread of a cell of threads
// connections that sends only op.
func cellStream(op opcode, threads, thread int) uint64 {
	s := uint64(threads)<<32 | uint64(thread)
	if op.writes() {
		s ^= writeStream
	}
	return s
}
