// Package watch is what a run shows of itself while it runs: the
// progress lines' cell counts and estimate of the time left (every phase
// the run will run, counted from its plan and, once measured, its own
// rates), the bundle's status.json for scripts and the --metrics-addr
// endpoint in the Prometheus text format.
//
// The facade holds one Run per run and tells it where the run is (Phase,
// AtRow, NextCell, Loaded); the Run reads the rest of the run only
// through Env. Invariants: status.json is always one whole document (a
// temp file renamed over it); a status that cannot be written is said
// once and never stops the run; the estimate errs long, never short
// (a phase that may stop early counts its most); without --metrics-addr
// nothing is sent to the servers beyond the run's own cells. It imports
// nothing of the facade.
package watch
