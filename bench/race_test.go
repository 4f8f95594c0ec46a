//go:build race

package bench

// raceEnabled: under the race detector sync.Pool drops items at random, so
// crypto/tls, whose record buffers come from one, allocates now and then.
const raceEnabled = true
