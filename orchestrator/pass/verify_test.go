package pass

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
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
	cfg := plan.Config{Workload: results.Workload{ValueLength: 96}}
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

func TestVerifyLoad(t *testing.T) {
	cfg := plan.Config{Workload: results.Workload{Memory: "16m", Page: "4m"}}
	skip := plan.Config{Workload: results.Workload{SkipLoad: true, ServerAddr: "127.0.0.1:6379"}}
	mb := uint64(1 << 20)
	const n = 100_000
	tests := []struct {
		name string
		cfg  plan.Config
		rec  results.LoadRecord
		want string // "" = accepted
	}{
		{"complete", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n}, ""},
		{"99.9 % acknowledged", cfg, results.LoadRecord{DBSize: n, Acknowledged: n - 100, ServerKeys: n - 100}, "loader saw 99900 of 100000 keys acknowledged (99.90 %, 100 missing"},
		{"99.99 % acknowledged", cfg, results.LoadRecord{DBSize: n, Acknowledged: n - 10, ServerKeys: n - 10}, "(99.99 %, 10 missing"},
		{"one key short", cfg, results.LoadRecord{DBSize: n, Acknowledged: n - 1, ServerKeys: n - 1}, "(99.999 %, 1 missing"},
		{"acknowledged but lost", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n - 1}, "server holds 99999 keys after a load of 100000 (99.999 %"},
		{"others there before", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n + 1}, "server holds 100001 keys after a load of 100000"},
		{"skip-load exact", skip, results.LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n}, ""},
		{"skip-load more keys", skip, results.LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: 2 * n}, ""},
		{"skip-load 99.9 %", skip, results.LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 100}, "holds 99900 keys, 100 fewer than --dbsize 100000 (99.90 %)"},
		{"skip-load 99.99 %", skip, results.LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 10}, "(99.99 %)"},
		{"skip-load one short", skip, results.LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 1}, "1 fewer than --dbsize 100000 (99.999 %); refusing to measure a partial load"},
		{"100 M, one short", skip, results.LoadRecord{DBSize: 100_000_000, Acknowledged: -1, ServerKeys: 99_999_999}, "(99.999999 %)"},
		{"reference log on device", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 12_783 * mb, TailAddress: 12_800 * mb}, ""},
		{"quick: memory-sized remainder", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 316 * mb, TailAddress: 330 * mb, DeviceShare: 316.0 / 330}, ""},
		{"whole log in memory", cfg, results.LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 64, TailAddress: 25 * mb}, "of the log is on the device"},
	}
	for _, tt := range tests {
		if tt.rec.Tiered && tt.rec.DeviceShare == 0 {
			tt.rec.DeviceShare = rig.LogAddresses{Begin: tt.rec.BeginAddress, Head: tt.rec.HeadAddress, Tail: tt.rec.TailAddress}.DeviceShare()
		}
		err := verifyLoad(tt.rec, tt.cfg)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && !errors.Is(err, fault.ErrRefused) {
			t.Errorf("%s: got %v, want an ErrRefused (exit 4)", tt.name, err)
		}
		if err != nil && strings.Contains(tt.want, "keys") && !errors.Is(err, ErrPartialLoad) {
			t.Errorf("%s: got %v, want ErrPartialLoad", tt.name, err)
		}
	}
}
