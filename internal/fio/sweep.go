package fio

import (
	"context"
	"errors"
	"fmt"
)

// Step is one depth of a sweep: Jobs × IODepth reads in flight in total.
type Step struct {
	Jobs    int `json:"jobs"`
	IODepth int `json:"iodepth"`
}

// Depth is the total number of reads the step keeps in flight.
func (s Step) Depth() int { return s.Jobs * s.IODepth }

// ladder is the depth sweep before the CPU cap: 64 to 4096 reads in
// flight, spread over more jobs as the depth grows so one job's submission
// path does not become the limit.
var ladder = []Step{{1, 64}, {2, 64}, {4, 128}, {8, 256}, {16, 256}}

// maxIODepthPerJob bounds one job's iodepth: io_uring rings and libaio
// contexts take larger ones, but past this fio spends its time reaping.
const maxIODepthPerJob = 4096

// DepthLadder returns the depths a sweep measures: total reads in flight
// from 64 up to at least maxDepth (the server's throttle limit), with jobs
// capped at maxJobs (the CPUs fio may use) and each job's iodepth raised to
// keep the total. Past the ladder's 4096 the depth doubles.
func DepthLadder(maxDepth, maxJobs int) []Step {
	maxJobs = max(maxJobs, 1)
	var out []Step
	add := func(depth, jobs int) {
		s := StepFor(depth, min(jobs, maxJobs))
		if len(out) > 0 && out[len(out)-1].Depth() >= s.Depth() {
			return // the CPU cap merged two steps
		}
		out = append(out, s)
	}
	for _, s := range ladder {
		add(s.Depth(), s.Jobs)
	}
	last := ladder[len(ladder)-1]
	for d := last.Depth() * 2; out[len(out)-1].Depth() < maxDepth; d *= 2 {
		add(d, last.Jobs)
	}
	return out
}

// StepFor splits depth reads in flight over at most jobs fio jobs, each
// with the same iodepth (rounded up, so the total is at least depth).
func StepFor(depth, jobs int) Step {
	depth, jobs = max(depth, 1), max(jobs, 1)
	jobs = min(jobs, depth)
	// Keep one job's depth within what fio handles well by adding jobs.
	for (depth+jobs-1)/jobs > maxIODepthPerJob {
		jobs *= 2
	}
	return Step{Jobs: jobs, IODepth: (depth + jobs - 1) / jobs}
}

// Point is one measured step of a sweep.
type Point struct {
	Step
	Result Result
}

// SweepResult is a finished sweep: every point in order, the index of the
// one with the highest IOPS, and whether it stopped before the last step.
type SweepResult struct {
	Points       []Point
	Best         int
	StoppedEarly bool
	// Note says why the sweep stopped early; "" when it ran every step.
	Note string
}

// BestPoint is the point with the highest IOPS.
func (r SweepResult) BestPoint() Point { return r.Points[r.Best] }

// Sweep measures a random-read job at increasing depths.
type Sweep struct {
	Job   Job    // files, engine, block size and runtime; Jobs and IODepth are set per step
	Steps []Step // in increasing depth
	// FlatSteps stops the sweep after that many steps in a row did not
	// beat the best IOPS so far by more than MinGrowth; 0 runs every step.
	FlatSteps int
	// MinGrowth is the relative IOPS gain a step needs to count as growth
	// (0.02 = 2 %).
	MinGrowth float64
	// Run runs one step; nil means the real fio (Run).
	Run func(context.Context, Job) (Result, error)
	// Done, when set, is told of each step as it finishes: its index in
	// Steps and its point. A sweep runs for minutes; this is its progress.
	Done func(step int, p Point)
}

// ErrNoSteps is returned by a Sweep with nothing to measure.
var ErrNoSteps = errors.New("fio: sweep has no steps")

// Do runs the steps in order and picks the highest IOPS. A failing step
// ends the sweep with an error naming its depth.
func (s Sweep) Do(ctx context.Context) (SweepResult, error) {
	if len(s.Steps) == 0 {
		return SweepResult{}, ErrNoSteps
	}
	run := s.Run
	if run == nil {
		run = Run
	}
	var res SweepResult
	flat := 0
	for i, st := range s.Steps {
		job := s.Job
		job.Jobs, job.IODepth = st.Jobs, st.IODepth
		r, err := run(ctx, job)
		if err != nil {
			return res, fmt.Errorf("fio sweep at %d reads in flight (%d jobs × iodepth %d): %w", st.Depth(), st.Jobs, st.IODepth, err)
		}
		res.Points = append(res.Points, Point{Step: st, Result: r})
		if s.Done != nil {
			s.Done(i, res.Points[len(res.Points)-1])
		}
		best := res.Points[res.Best].Result.IOPS
		switch {
		case i == 0:
		case r.IOPS > best*(1+s.MinGrowth):
			flat = 0
		default:
			flat++
		}
		if r.IOPS > best {
			res.Best = i
		}
		if s.FlatSteps > 0 && flat >= s.FlatSteps && i < len(s.Steps)-1 {
			b := res.BestPoint()
			res.StoppedEarly = true
			res.Note = fmt.Sprintf("stopped after %d reads in flight: the last %d steps did not beat %.0f IOPS (at %d in flight) by more than %.0f %%; %d deeper step(s) not run",
				st.Depth(), s.FlatSteps, b.Result.IOPS, b.Depth(), 100*s.MinGrowth, len(s.Steps)-1-i)
			break
		}
	}
	return res, nil
}
