// Package settle decides when a disk that was just written to reads at
// its ceiling again.
//
// A large load leaves a disk slower for seconds to minutes while it writes
// back what it took in (here, after the reference dataset's load, probes
// climbed back towards the ceiling from far below it), so a measurement
// that starts right after one measures the write-back, not the layer. The
// caller probes the disk with short read-only runs (Await), Verdict saying
// after each whether to go on.
// The rule is the same wherever a load precedes a measurement: the run's
// passes (fio probes over the server's files) and `tierbench kv` (its own
// read-only rounds over the store).
package settle

import (
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/human"
)

const (
	// Share is the share of its ceiling a probe must read for the disk to
	// count as settled.
	Share = 0.9
	// ProbeSeconds is each probe's length.
	ProbeSeconds = 2
	// MaxWait bounds the wait; the measurement then starts anyway and
	// says the disk had not settled.
	MaxWait = 3 * time.Minute
	// A probe must beat the fastest so far by Growth to count as the disk
	// still recovering; FlatProbes probes in a row that do not end the
	// wait below the ceiling (a disk slower today than when the ceiling
	// was measured, or shared with other work).
	Growth     = 0.05
	FlatProbes = 3
)

// Verdict says whether the probes so far (ops/s, in order; at least one)
// end the wait: settled once the last reads Share of ceiling; else ended,
// with why, after FlatProbes probes in a row that did not beat the
// fastest before them by Growth, or once waited reaches MaxWait. A
// ceiling of 0 (none known) ends the wait only on the plateau or the
// time limit, and a plateau then counts as settled: there is nothing
// higher to wait for.
func Verdict(probes []float64, ceiling float64, waited time.Duration) (done, settled bool, why string) {
	last := probes[len(probes)-1]
	if ceiling > 0 && last >= Share*ceiling {
		return true, true, ""
	}
	fastest, flat := 0.0, 0
	for _, v := range probes {
		if v > fastest*(1+Growth) {
			fastest, flat = v, 0
		} else {
			flat++
		}
	}
	if flat >= FlatProbes {
		return true, ceiling <= 0, fmt.Sprintf("%d probes in a row no faster than %s", flat, human.Ops(fastest))
	}
	if waited >= MaxWait {
		if ceiling <= 0 {
			return true, false, fmt.Sprintf("still getting faster after %v", MaxWait)
		}
		return true, false, fmt.Sprintf("still below the ceiling after %v", MaxWait)
	}
	return false, false, ""
}

// Outcome is one wait: the probes' ops/s in order, the seconds from the
// first probe's start to the last one's end, and Verdict's word on it.
type Outcome struct {
	Probes  []float64
	Seconds float64
	Settled bool
	Why     string
}

// Await runs probe (one ProbeSeconds measurement, returning its ops/s)
// until Verdict against ceiling ends the wait, calling seen after each
// probe. A probe's error ends the wait at once and is returned with the
// outcome so far; what it means (fatal, or a wait cut short) is the
// caller's to say.
func Await(ceiling float64, probe func() (float64, error), seen func(ops float64)) (Outcome, error) {
	var o Outcome
	start := time.Now()
	for {
		ops, err := probe()
		if err != nil {
			o.Seconds = time.Since(start).Seconds()
			return o, err
		}
		o.Probes = append(o.Probes, ops)
		seen(ops)
		var done bool
		if done, o.Settled, o.Why = Verdict(o.Probes, ceiling, time.Since(start)); done {
			o.Seconds = time.Since(start).Seconds()
			return o, nil
		}
	}
}
