package rig

import "time"

// phaseGraceSeconds is how long a GET phase may overrun its --runtime
// before the client is killed and the row fails: a server that stops
// answering must not hang the run.
const phaseGraceSeconds = 60

// PhaseLimit is how long a client phase that runs for seconds may take.
func PhaseLimit(seconds int) time.Duration {
	return time.Duration(seconds+phaseGraceSeconds) * time.Second
}
