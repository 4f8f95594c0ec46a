//go:build race

package store

// raceEnabled: the race detector slows the cache's policy simulation about
// tenfold, so it draws from fewer keys.
const raceEnabled = true
