package settle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestVerdict: the wait ends when a probe reads 90 % of the ceiling, or
// after three probes in a row that do not beat the fastest by 5 %, or
// after the time limit; a disk still getting faster keeps it going. The
// first case is the reference load's recovery seen here (28 K, 30 K,
// 35 K, 51 K… against a 73 K ceiling). Without a ceiling only the
// plateau or the limit ends it, and the plateau is the disk back.
func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		name          string
		probes        []float64
		ceiling       float64
		waited        time.Duration
		done, settled bool
		whyHas        string
	}{
		{"recovering", []float64{28e3, 30e3, 35e3, 51e3}, 73e3, 8 * time.Second, false, false, ""},
		{"back", []float64{28e3, 51e3, 66e3}, 73e3, 6 * time.Second, true, true, ""},
		{"at once", []float64{72e3}, 73e3, 2 * time.Second, true, true, ""},
		{"a plateau below", []float64{50e3, 51e3, 50e3, 52e3}, 73e3, 8 * time.Second, true, false, "3 probes in a row no faster than 50 K"},
		{"out of time", []float64{10e3, 20e3, 40e3}, 73e3, 4 * time.Minute, true, false, "still below the ceiling after 3m0s"},
		{"no ceiling, recovering", []float64{28e3, 51e3, 66e3}, 0, 6 * time.Second, false, false, ""},
		{"no ceiling, a plateau", []float64{66e3, 67e3, 66e3, 68e3}, 0, 8 * time.Second, true, true, "3 probes in a row no faster than 66 K"},
		{"no ceiling, out of time", []float64{10e3, 20e3, 40e3}, 0, 4 * time.Minute, true, false, "still getting faster after 3m0s"},
	} {
		done, settled, why := Verdict(tt.probes, tt.ceiling, tt.waited)
		if done != tt.done || settled != tt.settled || !strings.Contains(why, tt.whyHas) {
			t.Errorf("%s: got done %v settled %v why %q; want %v %v with %q", tt.name, done, settled, why, tt.done, tt.settled, tt.whyHas)
		}
	}
}

// TestAwait: the wait probes until Verdict ends it, showing every probe;
// a probe's error ends it at once with the probes so far.
func TestAwait(t *testing.T) {
	errProbe := errors.New("probe failed")
	for _, tt := range []struct {
		name    string
		reads   []float64 // probe i reads reads[i]; past the end it fails
		ceiling float64
		probes  []float64
		settled bool
		wantErr error
		whyHas  string
	}{
		{"back at the third probe", []float64{28e3, 51e3, 66e3, 70e3}, 73e3, []float64{28e3, 51e3, 66e3}, true, nil, ""},
		{"a plateau below", []float64{50e3, 51e3, 50e3, 52e3, 70e3}, 73e3, []float64{50e3, 51e3, 50e3, 52e3}, false, nil, "3 probes in a row"},
		{"a probe fails", []float64{28e3}, 73e3, []float64{28e3}, false, errProbe, ""},
	} {
		i := 0
		var seen []float64
		o, err := Await(tt.ceiling, func() (float64, error) {
			if i >= len(tt.reads) {
				return 0, errProbe
			}
			i++
			return tt.reads[i-1], nil
		}, func(ops float64) { seen = append(seen, ops) })
		if !errors.Is(err, tt.wantErr) || !slices.Equal(o.Probes, tt.probes) || !slices.Equal(seen, tt.probes) || o.Settled != tt.settled || !strings.Contains(o.Why, tt.whyHas) || o.Seconds < 0 {
			t.Errorf("%s: got %+v, err %v, seen %v; want probes %v settled %v err %v why with %q", tt.name, o, err, seen, tt.probes, tt.settled, tt.wantErr, tt.whyHas)
		}
	}
}
