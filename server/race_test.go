//go:build race

package server

// raceEnabled: under the race detector sync.Pool drops items at random, so
// crypto/tls's pooled record buffers are allocated again now and then and
// an allocation count over TLS means nothing.
const raceEnabled = true
