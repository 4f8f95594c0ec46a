package orchestrator

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

func TestVerifyLoad(t *testing.T) {
	cfg := plan.Config{Memory: "16m", Page: "4m"}
	skip := plan.Config{SkipLoad: true, ServerAddr: "127.0.0.1:6379"}
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

func TestParseInfoAndAddresses(t *testing.T) {
	info := rig.ParseInfo("# Store\r\nLog.BeginAddress:64\r\nLog.HeadAddress:24576000\r\nLog.TailAddress:25600128\r\nweird line\r\n")
	a, err := rig.ParseLogAddresses(info)
	if err != nil || a.Begin != 64 || a.Head != 24576000 || a.Tail != 25600128 {
		t.Errorf("got %+v, %v", a, err)
	}
	if s := a.DeviceShare(); s < 0.959 || s > 0.961 {
		t.Errorf("deviceShare: got %v, want ≈ 0.96", s)
	}
	if _, err := rig.ParseLogAddresses(rig.ParseInfo("# Server\r\nredis_version:7.0.15\r\n")); !errors.Is(err, rig.ErrNotTiered) {
		t.Errorf("redis INFO: got %v, want errNotTiered", err)
	}
	if _, err := rig.ParseLogAddresses(map[string]string{"Log.HeadAddress": "9", "Log.TailAddress": "5"}); err == nil {
		t.Errorf("head above tail: got nil error")
	}
}
