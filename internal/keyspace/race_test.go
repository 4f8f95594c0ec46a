//go:build race

package keyspace

// raceEnabled: the race detector slows every draw about tenfold, so the
// histogram tests draw a tenth as many keys under it.
const raceEnabled = true
