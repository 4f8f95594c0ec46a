package bench

import (
	"fmt"
	"io"

	"github.com/tierbench/tierbench/internal/cpustat"
)

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
