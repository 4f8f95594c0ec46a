package latency

import (
	"context"
	"fmt"
	"math"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Capacity at a bound (run --slo p99=1ms): after a row's passes (and its
// --latency steps), a search over fixed offered rates for the highest one
// whose percentile stays under the bound. Each probe is a latency step
// like --latency's (rateStep: `bench --online --rate` from intended send
// times, with its unrecorded warm-up), appended to latency.jsonl with its
// SLO and place in the search, so the report reads the search's result
// from the probes alone (results.FindSLO) and the latency chart shows
// them.
//
// The search starts at the ceiling, the row's best offline median: if
// that meets the bound it is done. Otherwise it halves the rate until a
// probe meets the bound (at most sloHalvings times, down to the ceiling
// ÷ 64; below that the row has no rate that meets it), then bisects
// between the highest rate that met the bound and the lowest that did not
// (geometric means) until they are within sloTolerance: a factor 2 takes
// sloBisections probes. So a search probes at most sloMaxProbes rates.
//
// A probe meets the bound when its percentile is at or under it, it
// achieved at least 95 % of its rate and it had no miss or error
// (results.SLO.Judge). A client-bound probe (the client could not keep
// its schedule) that meets the bound counts: its latency runs from the
// intended send times, so the client's lateness is inside it and the
// server's share met the bound too. One that does not meet it is marked
// client-bound, not over: the miss may be the client's, so the search
// goes no higher, and the result says the client bounded it (a lower
// bound of the server's capacity, never taken for it).
//
// The next rate depends only on the probes before it, so --resume
// replays a search from latency.jsonl and measures only the probes it
// lacks; a finished search measures nothing again.

const (
	SLOHalvings   = 6
	sloBisections = 4
	SLOMaxProbes  = 1 + SLOHalvings + sloBisections
	SLOTolerance  = 1.05
)

// sloPoint is one probe as the search sees it: its offered rate and
// whether it met the bound.
type SLOPoint struct {
	Rate float64
	Met  bool
}

// sloNext is the next rate to offer after probes, given the ceiling
// (both whole GET/s), or 0 when the search is over.
func SLONext(ceiling float64, probes []SLOPoint) float64 {
	if len(probes) == 0 {
		return ceiling
	}
	if len(probes) >= SLOMaxProbes {
		return 0
	}
	lo, hi := 0.0, 0.0
	for _, p := range probes {
		if p.Met {
			lo = max(lo, p.Rate)
		} else if hi == 0 || p.Rate < hi {
			hi = p.Rate
		}
	}
	switch {
	case hi == 0:
		return 0 // the ceiling met the bound
	case lo == 0:
		if len(probes) > SLOHalvings {
			return 0 // the ceiling ÷ 64 did not meet it either
		}
		return math.Max(1, math.Round(hi/2))
	case hi <= SLOTolerance*lo:
		return 0
	}
	next := math.Round(math.Sqrt(lo * hi))
	if next <= lo || next >= hi {
		return 0
	}
	return next
}

// sloReplay walks row's search over recs, the probes latency.jsonl
// holds, and returns the next rate it lacks (0: the search is over) and
// how many probes it has.
func SLOReplay(recs []results.LatencyRecord, row results.Row, slo results.SLO, best results.Cell) (float64, int) {
	name := slo.String()
	var probes []SLOPoint
	for {
		rate := SLONext(math.Round(best.Median), probes)
		if rate == 0 {
			return 0, len(probes)
		}
		i := -1
		for j, l := range recs {
			if l.Row == row && l.SLO == name && l.OfferedOpsPerSec == rate {
				i = j
				break
			}
		}
		if i < 0 {
			return rate, len(probes)
		}
		probes = append(probes, SLOPoint{Rate: rate, Met: slo.Judge(recs[i]) == ""})
	}
}

// SLOTodo reports whether row's search still lacks a probe, for a row
// with a cell in the table (--resume asks this as it asks Todo). The
// registry asks it only of a run with --slo.
func SLOTodo(env Env, row results.Row) (bool, error) {
	slo, err := results.ParseSLO(env.Config().SLO)
	if err != nil {
		return false, fmt.Errorf("orchestrator: --slo: %w", err)
	}
	done, best, ok, err := rowDone(env, row)
	if !ok || err != nil {
		return false, err
	}
	next, _ := SLOReplay(done, row, slo, best)
	return next > 0, nil
}

// SLOSearch runs row's search, measuring the probes latency.jsonl lacks.
// The registry runs it only for a run that asks for --slo.
func SLOSearch(ctx context.Context, env Env, row results.Row) error {
	slo, err := results.ParseSLO(env.Config().SLO)
	if err != nil {
		return fmt.Errorf("orchestrator: --slo: %w", err)
	}
	cells, _, err := results.ReadCells(env.Bundle())
	if err != nil {
		return err
	}
	best, ok := BestCell(env.Plan(), cells, row)
	if !ok {
		env.Printf("%s %s: no cell in the table, so no rate to start from: --slo search skipped\n", human.Title(row.Backend), row.Label)
		return nil
	}
	_, err = RunSLO(ctx, env, row, slo, best)
	return err
}

// RunSLO runs row's search from best, measuring the probes latency.jsonl
// lacks, and says what it found.
func RunSLO(ctx context.Context, env Env, row results.Row, slo results.SLO, best results.Cell) (results.SLOFinding, error) {
	recs, err := results.ReadLatency(env.Bundle())
	if err != nil {
		return results.SLOFinding{}, err
	}
	for {
		rate, n := SLOReplay(recs, row, slo, best)
		if rate == 0 {
			break
		}
		rec, err := sloProbe(ctx, env, row, slo, best, rate, n+1)
		if err != nil {
			return results.SLOFinding{}, err
		}
		if err := Append(env.Bundle(), rec); err != nil {
			return results.SLOFinding{}, err
		}
		recs = append(recs, rec)
	}
	f := results.FindSLO(recs, row, slo)
	env.Printf("slo: %s %s: %s\n", human.Title(row.Backend), row.Label, SLOSentence(f, slo))
	return f, nil
}

// sloProbe measures one probe of the search at rate, the probe-th.
func sloProbe(ctx context.Context, env Env, row results.Row, slo results.SLO, best results.Cell, rate float64, probe int) (results.LatencyRecord, error) {
	rec := rateRecord(env, row, best, rate)
	rec.SLO, rec.Probe = slo.String(), probe
	env.Printf("slo: %s %s, probe %d of at most %d for %s: %s GET/s offered (%.0f %% of %s, t=%d) for %d s after a %d s unrecorded warm-up\n",
		human.Title(row.Backend), row.Label, probe, SLOMaxProbes, slo.Title(), human.Ops(rate), 100*rec.Share, human.Ops(best.Median), best.Threads,
		env.Config().CellSeconds, results.LatencyWarmupSeconds)
	rec, err := rateStep(ctx, env, row, rec, fmt.Sprintf("--slo probe %d at %.0f GET/s", probe, rate), fmt.Sprintf("slo-%d", probe),
		HlogName(row, fmt.Sprintf("slo-%s-%.0f", slo.Percentile, rate)))
	if err != nil {
		return rec, err
	}
	verdict := "meets the bound"
	if why := slo.Judge(rec); why != "" {
		verdict = "does not: " + why
	}
	env.Printf("  achieved %s; %s %s: %s%s\n", human.Ops(rec.AchievedOpsPerSec), slo.Percentile, plots.FormatMicros(slo.Of(rec)), verdict, shortNote(rec))
	return rec, nil
}

// sloSentence says what a search found, in the words of the progress
// line.
func SLOSentence(f results.SLOFinding, slo results.SLO) string {
	met := fmt.Sprintf("no probed rate met %s", slo.Title())
	if f.Met != nil {
		met = fmt.Sprintf("%s GET/s at %s (%s %s there)", human.Ops(f.Met.OfferedOpsPerSec), slo.Title(), slo.Percentile, plots.FormatMicros(slo.Of(*f.Met)))
	}
	switch {
	case f.Above == nil:
		return fmt.Sprintf("%s, the ceiling; %d probes", met, f.Probes)
	case f.Why == "over":
		return fmt.Sprintf("%s; %s over it (%s %s); %d probes", met, human.Ops(f.Above.OfferedOpsPerSec), slo.Percentile, plots.FormatMicros(slo.Of(*f.Above)), f.Probes)
	}
	return fmt.Sprintf("%s; %s not met (%s); %d probes", met, human.Ops(f.Above.OfferedOpsPerSec), f.Why, f.Probes)
}

// validateSLO refuses an --slo that does not parse, or one the run
// cannot search (the fixed-rate client drives one server).
func validateSLO(c plan.Config, bad func(string, ...any)) {
	if c.SLO == "" {
		if c.Explicit("slo") {
			bad("--slo is empty: want PERCENTILE=BOUND such as p99=1ms, or leave it out")
		}
		return
	}
	if _, err := results.ParseSLO(c.SLO); err != nil {
		bad("--slo: %v", err)
		return
	}
	if c.MaxShards() > 1 {
		bad("--slo with --shards above 1 is not supported: the search's fixed-rate client drives one server, not a cluster; leave --slo out or use --shards 1")
	}
}
