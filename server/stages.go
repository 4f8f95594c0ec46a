package server

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/tierbench/tierbench/internal/loghist"
	"github.com/tierbench/tierbench/server/store"
)

// The stages of a GET, timed inside the server so that a latency measured
// by a client can be split into the server's parts (INFO latencystats, in
// the spirit of Redis's LATENCY and latency-tracking):
//
//   - parse: the request's bytes parsed into arguments;
//   - index: the hash index looked up and the log followed, in memory,
//     until the value is found or a device read is queued;
//   - submit: the device read handed to the kernel (io_submit,
//     io_uring_enter), for a GET that reads the device;
//   - complete: from Submit's return to the device's completion goroutine
//     taking the completion: the disk, and the reaper's wake-up; for a
//     read completed inside Submit on an idle device, from Submit's start;
//   - wake: from there until the connection's goroutine has taken the
//     result, with the others completed by then: the hand-off between
//     goroutines;
//   - reply: from the batch's last reply being ready to the write that
//     sends the replies returning;
//   - total: from the read that brought the request returning to that
//     write returning, once per batch holding a GET.
//
// A device GET has every stage; one answered from memory has no submit,
// complete or wake. Of a batch, the first stageTimedGets GETs are timed
// stage by stage and the others only in its reply and total. Each
// connection records into one of stageShards sets of histograms, chosen by
// its id, with atomic adds and no allocation; INFO merges the shards.
type stage uint8

const (
	stageParse stage = iota
	stageIndex
	stageSubmit
	stageComplete
	stageWake
	stageReply
	stageTotal
	nStages
)

var stageNames = [nStages]string{"parse", "index", "submit", "complete", "wake", "reply", "total"}

// stageShards spreads the connections' atomic adds over several cache
// lines per bucket, so that connections on different CPUs seldom write the
// same one.
const stageShards = 8

// stageTimedGets is how many GETs of a batch are timed stage by stage.
// A clock reading through a kvm-clock vDSO is not cheap, and a device GET
// takes four (one on the device's reaper): timing every GET of a deep
// pipeline was a visible share of a pinned server's CPU per GET
// (docs/notes/2026-12-07-comment-figures.md has the figures). A batch of up
// to this many GETs, which is every batch a latency-bound client sends, is
// still timed whole; of a deep pipeline the first ones are a sample whose
// reads were submitted, served and handed over with the rest.
const stageTimedGets = 16

type stageShard struct {
	h [nStages]loghist.Hist
}

// stageStats are the server's stage histograms. off is CONFIG SET
// latency-tracking no: connections then take no clock readings at all.
type stageStats struct {
	off    atomic.Bool
	shards [stageShards]stageShard
}

func (s *stageStats) shard(connID int64) *stageShard {
	return &s.shards[uint64(connID)%stageShards]
}

func (s *stageStats) reset() {
	for i := range s.shards {
		for j := range s.shards[i].h {
			s.shards[i].h[j].Reset()
		}
	}
}

// snapshot merges the shards of one stage.
func (s *stageStats) snapshot(st stage) loghist.Snapshot {
	var snap loghist.Snapshot
	for i := range s.shards {
		s.shards[i].h[st].AddTo(&snap)
	}
	return snap
}

// connStages is a connection's timing state for the batch it is serving.
// lat is nil while tracking is off.
type connStages struct {
	lat *stageShard
	// readAt: the read that brought the batch returned; parseBegin: the
	// request being parsed started; mark: it was parsed, or the last
	// key of it was looked up (an MGET's keys are timed one by one).
	readAt, parseBegin, mark int64
	// parseNanos is how long the request took to parse, recorded only
	// once it proves a GET (parseDue).
	parseNanos int64
	parseDue   bool
	gets       bool // the batch holds a GET
	// on: the request being served is timed stage by stage; timed: the
	// batch's GET keys timed so far (see stageTimedGets).
	on    bool
	timed int
}

// startBatch begins timing a batch whose bytes were just read.
func (cs *connStages) startBatch(srv *Server, connID int64) {
	cs.lat, cs.gets, cs.timed = nil, false, 0
	if srv.stages.off.Load() {
		return
	}
	cs.lat = srv.stages.shard(connID)
	cs.readAt = loghist.Now()
}

func (cs *connStages) beginParse() {
	cs.on = cs.lat != nil && cs.timed < stageTimedGets
	if cs.on {
		cs.parseBegin = loghist.Now()
	}
}

func (cs *connStages) parsed() {
	if cs.on {
		cs.mark = loghist.Now()
		cs.parseNanos = cs.mark - cs.parseBegin
		cs.parseDue = true
	}
}

// looked records the index stage of a key whose lookup has just ended,
// and the parse stage of its request once.
func (cs *connStages) looked() {
	if !cs.on {
		return
	}
	cs.timed++
	now := loghist.Now()
	if cs.parseDue {
		cs.lat.h[stageParse].Record(cs.parseNanos)
		cs.parseDue = false
	}
	cs.lat.h[stageIndex].Record(now - cs.mark)
	cs.mark = now
	cs.gets = true
}

// delivered records a device read's submit, complete and wake stages, as
// its result reaches the connection. A read that completed inside its
// Submit (device.IdleSubmitter, on an idle device) has no submit stage of
// its own: its complete stage runs from Submit's start, submission and
// disk together, as fio's total latency does. A read the session was told
// not to time (Session.TimeReads) has no Completed and records nothing.
func (cs *connStages) delivered(t store.ReadTimes) {
	if cs.lat == nil || t.SubmitEnd == 0 || t.Completed == 0 {
		return
	}
	if t.Completed < t.SubmitEnd {
		cs.lat.h[stageComplete].Record(t.Completed - t.SubmitBegin)
	} else {
		cs.lat.h[stageSubmit].Record(t.SubmitEnd - t.SubmitBegin)
		cs.lat.h[stageComplete].Record(t.Completed - t.SubmitEnd)
	}
	cs.lat.h[stageWake].Record(t.Taken - t.Completed)
}

// replyReady marks the batch's replies ready to write; the return is the
// moment, 0 when nothing is timed.
func (cs *connStages) replyReady() int64 {
	if cs.lat == nil || !cs.gets {
		return 0
	}
	return loghist.Now()
}

// written records reply and total once the batch's replies are written.
func (cs *connStages) written(ready int64) {
	if ready == 0 {
		return
	}
	now := loghist.Now()
	cs.lat.h[stageReply].Record(now - ready)
	cs.lat.h[stageTotal].Record(now - cs.readAt)
	cs.gets = false
}

// writeLatencyStats writes INFO latencystats: per stage, the calls and
// p50, p99, p99.9 and max in microseconds, in the form of Redis's
// latency_percentiles_usec_<command> lines.
func (s *Server) writeLatencyStats(b *strings.Builder) {
	b.WriteString("# Latencystats\r\n")
	usec := func(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e3) }
	for st := range nStages {
		snap := s.stages.snapshot(st)
		fmt.Fprintf(b, "latency_percentiles_usec_get_%s:p50=%s,p99=%s,p99.9=%s,max=%s,calls=%d\r\n",
			stageNames[st], usec(snap.Quantile(0.5)), usec(snap.Quantile(0.99)), usec(snap.Quantile(0.999)), usec(snap.Max()), snap.Count)
	}
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// parseYesNo reads a boolean CONFIG SET value as Redis does.
func parseYesNo(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "yes":
		return true, true
	case "no":
		return false, true
	}
	return false, false
}
