// Package fault holds the errors that classify why a run stopped short:
// a configuration that cannot run, a refusal to measure a server, a
// failed preflight. The facade maps them to exit statuses; every part
// of a run wraps them, so they sit below all of it.
package fault

import "errors"

// ErrRefused is wrapped by every refusal to measure: a --server-pid that
// does not own the socket, nothing listening, a partial load, a sampled
// GET that missed. A refusal is a verdict on the server, not a failure of
// the run.
var ErrRefused = errors.New("orchestrator: refused to measure")

// ErrPreflight marks a failed preflight: it stops the run.
var ErrPreflight = errors.New("orchestrator: preflight failed")

// ErrConfig wraps every error of a configuration that cannot run: the
// command line maps it to a usage error.
var ErrConfig = errors.New("orchestrator: bad configuration")
