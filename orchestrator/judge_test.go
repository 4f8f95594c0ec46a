package orchestrator

import (
	"errors"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
)

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
