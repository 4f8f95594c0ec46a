//go:build !amd64

package loghist

// Now is a monotonic clock in nanoseconds, the same for every goroutine:
// stages timed on different goroutines can be subtracted.
func Now() int64 { return sinceEpoch() }

func tscOn() bool { return false }
