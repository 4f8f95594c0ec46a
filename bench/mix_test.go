package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestParseOpMix(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"GET:95,SET:5", "GET:95,SET:5", ""},
		{"get:50, rmw:50", "GET:50,RMW:50", ""},
		{"GET:100", "GET:100", ""},
		{"GET:10,SET:10,INCR:10,DEL:10,MGET:10,RMW:50", "GET:10,SET:10,INCR:10,DEL:10,MGET:10,RMW:50", ""},
		{"", "", "is not OP:PERCENT"},
		{"GET", "", "is not OP:PERCENT"},
		{"PING:100", "", "is not one of"},
		{"MSET:100", "", "is not one of"},
		{"GET:50,GET:50", "", "given twice"},
		{"GET:0,SET:100", "", "whole percentage"},
		{"GET:95.5,SET:4.5", "", "whole percentage"},
		{"GET:95,SET:4", "", "add up to 99"},
		{"GET:101", "", "whole percentage"},
	}
	for _, tt := range tests {
		got, err := ParseOpMix(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseOpMix(%q): %v, want %s", tt.in, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseOpMix(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
		case err == nil && MixString(got) != tt.want:
			t.Errorf("ParseOpMix(%q) = %s, want %s", tt.in, MixString(got), tt.want)
		}
	}
	for name, mix := range Workloads {
		if _, err := ParseOpMix(mix); err != nil {
			t.Errorf("--workload %s: %v", name, err)
		}
	}
}

// FuzzParseOpMix: any text either fails, or gives a mix whose spelling
// parses back to it and which a plan accepts.
func FuzzParseOpMix(f *testing.F) {
	for _, s := range []string{"GET:95,SET:5", "get:50,rmw:50", "GET:100", "MGET:1,DEL:99", "GET:50,GET:50", "GET:-5,SET:105"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mix, err := ParseOpMix(s)
		if err != nil {
			return
		}
		back, err := ParseOpMix(MixString(mix))
		if err != nil || MixString(back) != MixString(mix) {
			t.Fatalf("ParseOpMix(%q) = %s, which parses to %v, %v", s, MixString(mix), back, err)
		}
		cfg := DefaultConfig()
		cfg.OpMix = mix
		if _, err := cfg.plan(); err != nil {
			t.Fatalf("ParseOpMix(%q) = %s, which the plan refuses: %v", s, MixString(mix), err)
		}
	})
}

func TestMixPlanRefusals(t *testing.T) {
	mix := func(s string) []MixShare {
		m, err := ParseOpMix(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"online", func(c *Config) { c.Online = true }, "--op-mix is offline"},
		{"window", func(c *Config) { c.Pipeline = PipelineWindow }, "use --pipeline batch"},
		{"cluster", func(c *Config) { c.Cluster = true }, "--cluster-bench runs single-command cells"},
		{"verify DEL", func(c *Config) { c.Verify, c.OpMix = true, mix("GET:90,DEL:10") }, "the mix's DEL changes them"},
		{"verify INCR", func(c *Config) { c.Verify, c.OpMix = true, mix("GET:90,INCR:10") }, "the mix's INCR changes them"},
		{"INCR long values", func(c *Config) { c.ValueLength, c.OpMix = 19, mix("GET:90,INCR:10") }, "at most 18 digits"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.OpMix = mix("GET:95,SET:5")
		tt.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// TestMixBatches: every pre-built mix batch is exactly the commands of its
// ops, each RMW a GET and a SET of one key, and so it stays when redrawn;
// the ops follow the mix's shares.
func TestMixBatches(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DBSize, cfg.KeyLength, cfg.ValueLength = 100000, 10, 18
	cfg.Batch, cfg.PrebuiltOpsPerThread = 100, 100000
	cfg.OpMix, _ = ParseOpMix("GET:40,SET:10,INCR:5,DEL:5,MGET:10,RMW:30")
	cfg.KeyDist = mustDist(t, "hotspot:0.1,0.9")
	p, err := cfg.plan()
	if err != nil {
		t.Fatal(err)
	}
	tb := buildMixBatches(p, 1, 0)
	check := func(when string) {
		m := tb.mix
		var want []byte
		ops := map[mixOp]int{}
		for i, c := range m.cmds {
			n := len(m.layouts[c.wire].keyAt)
			if c.at != len(want) {
				t.Fatalf("%s: command %d at byte %d, want %d", when, i, c.at, len(want))
			}
			want = appendCommand(want, c.wire, tb.keys[c.key:int(c.key)+n], p.keyLength, p.ValueLength)
			if c.op == mixRMW && c.wire == opSet {
				prev := m.cmds[i-1]
				if prev.op != mixRMW || prev.wire != opGet || tb.keys[prev.key] != tb.keys[c.key] {
					t.Fatalf("%s: RMW SET of key %d does not follow the GET of the same key", when, tb.keys[c.key])
				}
				continue
			}
			ops[c.op]++
		}
		if string(tb.req) != string(want) {
			t.Fatalf("%s: the batches differ from appendCommand's encoding of their commands", when)
		}
		total := tb.count() * cfg.Batch
		for _, e := range p.mix {
			if got, wantN := float64(ops[e.op])/float64(total), float64(e.percent)/100; got < wantN-0.01 || got > wantN+0.01 {
				t.Errorf("%s: %s is %.3f of the ops, want %.2f", when, e.op, got, wantN)
			}
		}
		for i := range tb.count() {
			got := 0
			for _, c := range m.cmds[m.cmdOffsets[i]:m.cmdOffsets[i+1]] {
				if c.op != mixRMW || c.wire == opGet {
					got++
				}
			}
			if got != cfg.Batch {
				t.Fatalf("%s: batch %d carries %d ops, want %d", when, i, got, cfg.Batch)
			}
		}
	}
	check("built")
	before := append([]uint64(nil), tb.keys...)
	for i := range tb.count() {
		tb.redrawMixBatch(p, i)
	}
	check("redrawn")
	same := 0
	for i := range before {
		if before[i] == tb.keys[i] {
			same++
		}
	}
	if same > len(before)/5 {
		t.Errorf("redrawing kept %d of %d keys, want most changed", same, len(before))
	}
}

// TestMixLoopAllocatesNothing runs whole mix batches (redrawn: zipf keys;
// and cycled: uniform) on three connections of one event loop against
// redis-server and counts allocations.
func TestMixLoopAllocatesNothing(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	for _, dist := range []string{"uniform", "zipf:0.99"} {
		t.Run(dist, func(t *testing.T) {
			cfg.Verify = true
			cfg.KeyDist = mustDist(t, dist)
			cfg.OpMix, _ = ParseOpMix("GET:40,SET:20,MGET:10,RMW:30")
			p, err := cfg.plan()
			if err != nil {
				t.Fatal(err)
			}
			ts := make([]*offlineThread, 3)
			for i := range ts {
				conn, err := dial(context.Background(), p.addr, dialSpec{})
				if err != nil {
					t.Fatal(err)
				}
				defer conn.conn.Close()
				ts[i] = &offlineThread{conn: conn, batches: buildMixBatches(p, len(ts), i), rr: newReplyReader(conn, readBufferBytes, p.op, true, p.ValueLength),
					mix: &threadMix{pend: make([]pendingLatency, 0, p.Batch)}}
			}
			l := mustLoop(t, p, ts...)
			l.stop.Store(true) // one batch per connection and run
			l.run()
			allocs := testing.AllocsPerRun(200, l.run)
			for _, th := range ts {
				if th.err != nil {
					t.Fatal(th.err)
				}
				if c := th.rr.counts; c.hits == 0 || c.mismatches != 0 || c.misses != 0 || c.errors != 0 {
					t.Errorf("counts %+v: want verified hits", c)
				}
			}
			if allocs != 0 {
				t.Errorf("a batch of %d mixed ops on each of %d connections sent and its replies parsed allocated %v times, want 0", p.Batch, len(ts), allocs)
			}
		})
	}
}

// mixServers are the real servers a mix runs against: redis-server, and
// the tierbench server tiered onto O_DIRECT files with a log memory far
// below the data, so most GETs are device reads and SETs append to the
// log's tail.
func mixServers(t *testing.T) map[string]string {
	r := testenv.MustRedisServer(t)
	bin := testenv.MustBinary(t)
	port := testenv.FreePort(t)
	srv := exec.Command(bin, "server", "--port", strconv.Itoa(port), "--storage-tier",
		"--memory", "256k", "--page", "64k", "--segment", "1m", "--index", "1m", "--logdir", testenv.MustDiskDir(t))
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.StopProcess(srv) })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	testenv.MustWaitPing(t, addr, 20*time.Second)
	return map[string]string{"redis-server": r.Addr, "tierbench": addr}
}

// TestMixesAgainstRealServers runs the YCSB presets and a mix of every
// dataset-keeping operation, verified, on redis-server and on the tiered
// tierbench server: the per-operation ops add up to the cell's, each
// operation was run, every GET verified with no miss and no error,
// every RMW answered twice, and afterwards DBSIZE is exactly the load and
// a verified GET cell over all keys still passes (SET wrote each key's own
// value at the loaded length).
func TestMixesAgainstRealServers(t *testing.T) {
	for name, addr := range mixServers(t) {
		t.Run(name, func(t *testing.T) {
			cfg := configFor(t, addr)
			cfg.DBSize = 20011
			cfg.KeyLength = 16
			cfg.ValueLength = 96
			mustLoad(t, &cfg)
			cfg.SkipLoad = true
			cfg.Runtime = 500 * time.Millisecond
			for _, tt := range []struct{ mix, dist string }{
				{Workloads["ycsb-a"], "zipf:0.99"},
				{Workloads["ycsb-b"], "uniform"},
				{Workloads["ycsb-c"], "latest"},
				{Workloads["ycsb-f"], "hotspot:0.2,0.8"},
				{"GET:40,SET:20,MGET:10,RMW:30", "gaussian"},
			} {
				run := cfg
				run.OpMix, _ = ParseOpMix(tt.mix)
				run.KeyDist = mustDist(t, tt.dist)
				run.Verify = true
				run.Threads = []int{3}
				rep, human, err := runJSON(t, context.Background(), run)
				if err != nil {
					t.Fatalf("%s over %s keys: %v\n%s", tt.mix, tt.dist, err, human)
				}
				c := rep.Cells[0]
				var ops, replies int64
				for _, r := range c.Mix {
					ops += r.Ops
					replies += r.Hits + r.Misses + r.Errors
					if r.Misses != 0 || r.Errors != 0 || r.Mismatches != 0 || r.Ops == 0 || r.LatencyMicros.P50 <= 0 {
						t.Errorf("%s %s: %+v: want verified hits with latencies", tt.mix, r.Op, r)
					}
					wantReplies := r.Ops
					if r.Op == "RMW" {
						wantReplies = 2 * r.Ops
					}
					if r.Hits != wantReplies {
						t.Errorf("%s %s: %d hits for %d ops, want %d", tt.mix, r.Op, r.Hits, r.Ops, wantReplies)
					}
				}
				if ops != c.Ops || replies != c.Hits+c.Misses+c.Errors || c.Op != tt.mix || c.KeyDist != mustDist(t, tt.dist).String() {
					t.Errorf("%s: cell op %q ops %d hits %d; the mix's ops add up to %d and its replies to %d", tt.mix, c.Op, c.Ops, c.Hits, ops, replies)
				}
				if !strings.Contains(human, "["+c.Mix[0].Op+"]: ") {
					t.Errorf("%s: the human output lacks the per-operation lines:\n%s", tt.mix, human)
				}
				if got := redisInt(t, addr, "DBSIZE"); got != cfg.DBSize {
					t.Errorf("%s: DBSIZE %d after the mix, want %d", tt.mix, got, cfg.DBSize)
				}
			}
			// Online draws from the distribution too: a verified GET/SET
			// mix over the latest keys.
			online := cfg
			online.Online, online.Verify = true, true
			online.Threads = []int{2}
			online.OpWorkload, online.OpPercent = []string{"GET", "SET"}, []int{70, 30}
			online.KeyDist = mustDist(t, "latest")
			rep, human, err := runJSON(t, context.Background(), online)
			if err != nil || rep.Online.Ops == 0 || rep.Online.Hits != rep.Online.Ops {
				t.Fatalf("verified online GET/SET over latest keys: %v\n%s", err, human)
			}
			get := cfg
			get.Verify = true
			get.Op = "MGET"
			get.Threads = []int{2}
			rep, human, err = runJSON(t, context.Background(), get)
			if err != nil || rep.Cells[0].Hits != rep.Cells[0].Ops {
				t.Fatalf("verified MGETs after the mixes: %v\n%s", err, human)
			}
		})
	}
}
