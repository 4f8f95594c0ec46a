package bench

import (
	"fmt"
	"io"

	"github.com/tierbench/tierbench/internal/cpustat"
)

// stealWatch is this host's /proc/stat read as a measured window begins,
// so that its end can say how much CPU time the hypervisor took in it.
type stealWatch struct {
	before cpustat.Sample
	err    error
}

func watchSteal() stealWatch {
	s, err := cpustat.Read("/")
	return stealWatch{s, err}
}

// share is the steal share of this host's CPU time since watchSteal, nil
// when it cannot be told (no /proc/stat, no steal column, a window under
// one tick): the run goes on without it.
func (w stealWatch) share() *float64 {
	if w.err != nil {
		return nil
	}
	after, err := cpustat.Read("/")
	if err != nil {
		return nil
	}
	s, err := after.StealShare(w.before)
	if err != nil {
		return nil
	}
	return &s
}

// printSteal writes the [Host] line of a window whose steal was read.
func printSteal(w io.Writer, share *float64) {
	if share == nil {
		return
	}
	fmt.Fprintf(w, "[Host]: the hypervisor took %.1f %% of this host's CPU time (steal) during the window", 100**share)
	if *share >= cpustat.NoticeableSteal {
		fmt.Fprint(w, ": each stolen slice stalled whatever ran there, the client's sends and the server's replies alike")
	}
	fmt.Fprintln(w)
}
