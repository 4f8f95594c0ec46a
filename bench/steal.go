package bench

import (
	"fmt"
	"io"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/freeze"
)

// printFreezes writes the [Host] line of a window whose freezes were
// measured.
func printFreezes(w io.Writer, s *freeze.Stats, seconds float64) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "[Host]: this machine's %d CPUs stood still %d times, %.1f ms in all (%.2f %% of their time), the longest %.1f ms: time the host did not run them at all, which steal does not count (a CPU quota running out)\n",
		s.CPUs, s.Count, s.FrozenMillis, 100*s.FrozenShare(seconds), s.LongestMillis)
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
