package server

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// stageLine is one latency_percentiles_usec_get_<stage> line of INFO
// latencystats.
type stageLine struct {
	calls         int64
	p50, p99, max float64 // microseconds
}

// latencyStats parses INFO latencystats into its stages.
func latencyStats(t *testing.T, c *client) map[string]stageLine {
	t.Helper()
	info := c.do("INFO", "latencystats")
	stages := map[string]stageLine{}
	for _, l := range strings.Split(info, "\r\n") {
		name, fields, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(name, "latency_percentiles_usec_get_") {
			continue
		}
		var sl stageLine
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("INFO latencystats %s: %s: %v", name, f, err)
			}
			switch k {
			case "calls":
				sl.calls = int64(n)
			case "p50":
				sl.p50 = n
			case "p99":
				sl.p99 = n
			case "max":
				sl.max = n
			}
		}
		stages[strings.TrimPrefix(name, "latency_percentiles_usec_get_")] = sl
	}
	for _, st := range stageNames {
		if _, ok := stages[st]; !ok {
			t.Fatalf("INFO latencystats has no %s stage: %q", st, info)
		}
	}
	return stages
}

// TestGetStagesCounted: on a real tiered server, GETs of keys that live
// only on the device are counted in the submit, complete and wake stages,
// GETs from memory only in the others; CONFIG RESETSTAT empties the
// histograms and latency-tracking no stops them.
func TestGetStagesCounted(t *testing.T) {
	for _, tc := range []struct {
		backend string
		sg      bool
	}{{"uring", false}, {"libaio", true}} {
		t.Run(fmt.Sprintf("%s/sg=%v", tc.backend, tc.sg), func(t *testing.T) {
			s := startTiered(t, Config{ScatterGatherGet: tc.sg, Store: tieredStore(t, "native", tc.backend)})
			c := dial(t, s)
			loadTiered(t, s, c)
			if got := c.do("CONFIG", "RESETSTAT"); got != "+OK\r\n" {
				t.Fatalf("CONFIG RESETSTAT: %q", got)
			}
			if st := latencyStats(t, c); st["index"].calls != 0 || st["total"].calls != 0 {
				t.Fatalf("after CONFIG RESETSTAT: %+v", st)
			}
			const cold, warm = 40, 10
			before := s.Store().Stats().CompletedReads
			for i := 0; i < cold; i++ { // the first half lives only on the device
				if got := c.do("GET", tieredKey(i)); got != bulk(tieredValue(i)) {
					t.Fatalf("GET %s: %q", tieredKey(i), got)
				}
			}
			for i := tieredKeys - warm; i < tieredKeys; i++ {
				if got := c.do("GET", tieredKey(i)); got != bulk(tieredValue(i)) {
					t.Fatalf("GET %s: %q", tieredKey(i), got)
				}
			}
			reads := s.Store().Stats().CompletedReads - before
			if reads < cold {
				t.Fatalf("%d device reads for %d cold GETs", reads, cold)
			}
			st := latencyStats(t, c)
			t.Logf("stages (µs): %+v", st)
			for _, name := range []string{"parse", "index", "reply", "total"} {
				if st[name].calls != cold+warm {
					t.Errorf("stage %s: %d calls, want %d (every GET)", name, st[name].calls, cold+warm)
				}
			}
			for _, name := range []string{"complete", "wake"} {
				// A record read whole at once takes one read; none of
				// the warm GETs reads the device.
				if got := st[name].calls; got < cold || got > reads {
					t.Errorf("stage %s: %d calls, want %d to %d (the device reads)", name, got, cold, reads)
				}
			}
			// A read completed before its Submit returned (inside it, on
			// an idle uring device) has its submission in its complete
			// stage.
			if got := st["submit"].calls; got > reads {
				t.Errorf("stage submit: %d calls, want at most %d", got, reads)
			}
			// Each cold GET's total holds its complete stage, so the
			// slowest total is at least the slowest completion. Not the
			// medians: total's is over the warm GETs too, and a quick
			// ten of them put it below the cold GETs' completions under
			// load (a full package run here: 69.6 µs against 77.8).
			if st["complete"].p50 <= 0 || st["total"].max < st["complete"].max || st["total"].max < st["total"].p99 {
				t.Errorf("implausible stage figures: %+v", st)
			}
			// A pipeline deeper than stageTimedGets: only its first GETs
			// are timed stage by stage, the batch as a whole in total.
			const piped = 3 * stageTimedGets
			var pipe []byte
			for i := cold; i < cold+piped; i++ { // on the device, not read yet
				pipe = append(pipe, encodeArgs("GET", tieredKey(i))...)
			}
			c.send(pipe)
			for i := cold; i < cold+piped; i++ {
				if got := c.reply(); got != bulk(tieredValue(i)) {
					t.Fatalf("pipelined GET %s: %q", tieredKey(i), got)
				}
			}
			pst := latencyStats(t, c)
			batches := pst["total"].calls - st["total"].calls
			timed := pst["index"].calls - st["index"].calls
			// The server may read the pipeline in more than one batch.
			if batches < 1 || timed < stageTimedGets || timed > batches*stageTimedGets || timed >= piped {
				t.Errorf("%d pipelined GETs in %d batches: %d timed in index, want %d per batch", piped, batches, timed, stageTimedGets)
			}
			if got := pst["parse"].calls - st["parse"].calls; got != timed {
				t.Errorf("%d pipelined GETs: %d timed in parse, want %d (as in index)", piped, got, timed)
			}
			if got := pst["complete"].calls - st["complete"].calls; got < 1 || got > timed {
				t.Errorf("%d pipelined GETs, %d timed: %d device reads timed in complete, want 1 to %d", piped, timed, got, timed)
			}
			st = pst
			if got := c.do("CONFIG", "SET", "latency-tracking", "no"); got != "+OK\r\n" {
				t.Fatalf("CONFIG SET latency-tracking no: %q", got)
			}
			if got := c.do("CONFIG", "GET", "latency-tracking"); got != array(bulk("latency-tracking"), bulk("no")) {
				t.Fatalf("CONFIG GET latency-tracking: %q", got)
			}
			c.do("GET", tieredKey(cold))
			if after := latencyStats(t, c); after["total"].calls != st["total"].calls || after["complete"].calls != st["complete"].calls {
				t.Errorf("latency-tracking no, yet a GET was counted: %+v then %+v", st, after)
			}
			if got := c.do("CONFIG", "SET", "latency-tracking", "maybe"); !strings.HasPrefix(got, "-ERR") {
				t.Errorf("CONFIG SET latency-tracking maybe: %q, want an error", got)
			}
		})
	}
}

// TestLoneDeviceGetAllocs: a lone GET of a key on the device, timed stage
// by stage, allocates nothing on either native backend, with and without
// scatter-gather (on an idle uring device it completes inside its Submit).
func TestLoneDeviceGetAllocs(t *testing.T) {
	var batches, values [][]byte
	for k := 0; k < 1000; k++ { // the first half of the keys live only on the device
		batches = append(batches, encodeArgs("GET", tieredKey(k)))
		values = append(values, []byte(tieredValue(k)))
	}
	for _, backend := range []string{"uring", "libaio"} {
		for _, sg := range []bool{false, true} {
			s := startTiered(t, Config{ScatterGatherGet: sg, Store: tieredStore(t, "native", backend)})
			loadTiered(t, s, dial(t, s))
			c := newConn(s, nil)
			t.Cleanup(c.sess.Close)
			i := 0
			run := func() {
				i++
				c.r, c.w = 0, copy(c.rbuf, batches[i%len(batches)])
				c.stages.startBatch(s, c.id)
				c.process()
				c.fillHoles()
				c.stages.written(c.stages.replyReady())
				if !bytes.Contains(c.out, values[i%len(values)]) {
					t.Fatalf("GET %s: %q", tieredKey(i%len(values)), c.out)
				}
				c.out = c.out[:0]
			}
			run()
			before := s.Store().Stats().CompletedReads
			if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
				t.Errorf("%s sg=%v: a lone device GET allocates %v times, want 0", backend, sg, allocs)
			}
			if reads := s.Store().Stats().CompletedReads - before; reads < 100 {
				t.Errorf("%s sg=%v: %d device reads for 101 GETs of device keys", backend, sg, reads)
			}
		}
	}
}
