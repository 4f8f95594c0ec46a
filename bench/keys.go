package bench

import "math/rand/v2"

// keyRNG seeds the key stream of one thread of one cell for plan.sampler:
// the same seed and stream give the same keys, and mix64 spreads
// neighbouring stream numbers apart so threads draw independent keys. It is
// owned by one goroutine.
func keyRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, mix64(stream)))
}
