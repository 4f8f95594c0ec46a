package orchestrator

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

func TestSampleKeys(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	all := rig.SampleKeys(500, rig.MinSampleKeys, rnd)
	if len(all) != 500 || all[0] != 0 || all[499] != 499 {
		t.Errorf("dbsize 500: got %d keys from %d to %d, want all 500", len(all), all[0], all[len(all)-1])
	}
	const dbsize = 1_000_000
	got := rig.SampleKeys(dbsize, rig.MinSampleKeys, rnd)
	if len(got) != rig.MinSampleKeys || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != rig.MinSampleKeys {
		t.Fatalf("dbsize %d: got %d keys, want %d distinct sorted ones", dbsize, len(got), rig.MinSampleKeys)
	}
	// Uniform: each tenth of the key space gets about a tenth of the sample.
	var tenths [10]int
	for _, k := range got {
		if k >= dbsize {
			t.Fatalf("key %d outside [0, %d)", k, dbsize)
		}
		tenths[k*10/dbsize]++
	}
	for i, n := range tenths {
		if n < rig.MinSampleKeys/10*85/100 || n > rig.MinSampleKeys/10*115/100 {
			t.Errorf("tenth %d of the key space: %d of %d samples, want about %d", i, n, rig.MinSampleKeys, rig.MinSampleKeys/10)
		}
	}
}

func TestJudgeSample(t *testing.T) {
	cfg := plan.Config{ValueLength: 96}
	tests := []struct {
		name    string
		s       results.SampleCheck
		maxMiss float64
		want    string // "" = accepted
	}{
		{"clean", results.SampleCheck{Keys: 20000}, 0, ""},
		{"one miss", results.SampleCheck{Keys: 20000, Missed: 1, FirstBad: "key 0000000000000042: null bulk: a miss"}, 0, "1 of 20000 sampled keys missed (0.005 %)"},
		{"wrong length", results.SampleCheck{Keys: 20000, WrongLength: 2}, 0, "2 had a value of the wrong length (want 96 B)"},
		{"error replies", results.SampleCheck{Keys: 20000, Errors: 3}, 0.01, "3 got an error reply"},
		{"within --max-miss-ratio", results.SampleCheck{Keys: 20000, Missed: 2}, 0.001, ""},
		{"beyond --max-miss-ratio", results.SampleCheck{Keys: 20000, Missed: 21}, 0.001, "21 of 20000 sampled keys missed (0.105 %)"},
	}
	for _, tt := range tests {
		cfg.MaxMissRatio = tt.maxMiss
		err := judgeSample(tt.s, 200000, cfg)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrSampleMiss)) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}
