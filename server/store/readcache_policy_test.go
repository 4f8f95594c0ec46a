package store

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tierbench/tierbench/internal/keyspace"
)

// rcRecord is the 128-byte log record of key index i, as the device holds
// it, and its address.
func rcRecord(i uint64) (addr uint64, rec []byte) {
	key := keyspace.AppendKey(nil, i, 16)
	value := make([]byte, 96)
	copy(value, key)
	rec = make([]byte, recordBytes(16, 96, false))
	writeRecord(rec, 0, false, 0, key, value)
	return 64 + i*uint64(len(rec)), rec
}

// simulateReadCache draws draws key indices from s and reads each through
// a read cache of budget bytes as the store does (a lookup, and on a miss
// the device's record offered); it returns the share of draws that missed.
func simulateReadCache(s keyspace.Sampler, budget int64, warm, draws int, seed uint64) float64 {
	rc := newReadCache(budget)
	rng := rand.New(rand.NewPCG(seed, 1))
	recs := make(map[uint64][]byte)
	var dst []byte
	var h header
	misses := 0
	for d := -warm; d < draws; d++ {
		k := s.Next(rng)
		addr, rec := rcRecord(k)
		key := rec[headerBytes : headerBytes+16]
		var out memOutcome
		dst, out = rc.lookup(addr, key, dst, &h)
		if out == memGone {
			if d >= 0 {
				misses++
			}
			if r, ok := recs[k]; ok {
				rec = r
			} else {
				recs[k] = rec
			}
			rc.admit(addr, rec)
		}
	}
	return float64(misses) / float64(draws)
}

// TestReadCacheMissShare checks the policy against the ideal cache of the
// same memory, which holds the hottest C = budget/128 keys: once warm (a
// frequency policy learns the hot set from the draws, ten per key here),
// the misses must stay within 1.25 × the ideal's under zipf, and within 3
// points of 1 − C/N under uniform keys.
func TestReadCacheMissShare(t *testing.T) {
	const warmDraws = 10
	n := uint64(50_000)
	if raceEnabled {
		n = 10_000
	}
	{
		for _, tc := range []struct {
			dist     string
			fraction float64
		}{
			{"zipf:0.99", 0.1}, {"zipf:0.99", 0.4}, {"uniform", 0.1}, {"uniform", 0.4},
		} {
			t.Run(fmt.Sprintf("%s/%g/warm%d", tc.dist, tc.fraction, warmDraws), func(t *testing.T) {
				d, err := keyspace.ParseDist(tc.dist)
				if err != nil {
					t.Fatal(err)
				}
				s := d.Sampler(n)
				budget := int64(tc.fraction * float64(n) * 128)
				c := uint64(budget / 128)
				got := simulateReadCache(s, budget, warmDraws*int(n), 10*int(n), 1)
				ideal := 1 - topMass(d, n, c)
				t.Logf("miss share %.4f, ideal %.4f, ratio %.3f", got, ideal, got/ideal)
				if d.Kind == keyspace.Uniform {
					if math.Abs(got-ideal) > 0.03 {
						t.Errorf("got miss share %.4f, want within 0.03 of %.4f", got, ideal)
					}
				} else if got > 1.25*ideal {
					t.Errorf("got miss share %.4f, want at most 1.25 × the ideal %.4f", got, ideal)
				}
			})
		}
	}
}

// topMass is the share of draws that fall on the c hottest keys.
func topMass(d keyspace.Dist, n, c uint64) float64 {
	switch d.Kind {
	case keyspace.Uniform:
		return float64(c) / float64(n)
	}
	var z, top float64
	for i := uint64(1); i <= n; i++ {
		p := math.Pow(float64(i), -d.Theta)
		z += p
		if i <= c {
			top += p
		}
	}
	return top / z
}
