//go:build !linux

package freeze

import (
	"errors"
	"time"
)

// Probe is Linux's alone: elsewhere Start always fails.
type Probe struct{}

// Start fails: the cpu-clock sampling the probe reads is Linux's.
func Start(time.Duration) (*Probe, error) {
	return nil, errors.New("freeze: the probe needs Linux's perf events")
}

// Stop returns nothing.
func (*Probe) Stop() Stats { return Stats{} }
