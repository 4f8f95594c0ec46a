package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestWindowPipelineAgainstRedis runs GET cells in window mode against a
// real redis-server with --verify: every op is a verified hit and the cell
// says which pipeline ran.
func TestWindowPipelineAgainstRedis(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg = configFor(t, r.Addr)
	cfg.SkipLoad, cfg.Verify, cfg.Pipeline = true, true, PipelineWindow
	cfg.Threads = []int{1, 3}
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("window GET --verify: %v\n%s", err, human)
	}
	if len(rep.Cells) != 2 {
		t.Fatalf("cells: got %d, want 2", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		if c.Ops == 0 || c.Hits != c.Ops || c.Misses != 0 || c.Errors != 0 || c.Mismatches != 0 || c.Pipeline != PipelineWindow {
			t.Errorf("t=%d: ops %d hits %d misses %d errors %d mismatches %d pipeline %q; want verified hits, pipeline window",
				c.Threads, c.Ops, c.Hits, c.Misses, c.Errors, c.Mismatches, c.Pipeline)
		}
	}
}

// windowProbe is a RESP server for one connection that answers GETs with a
// one-byte bulk, half of what is outstanding at a time, and records how
// many requests were ever unanswered at once and whether new requests came
// while earlier ones were still unanswered (what a window does and a batch
// never does). When no request arrives for a while it answers the rest, so
// a batch client is not stuck.
type windowProbe struct {
	maxOutstanding atomic.Int64
	refills        atomic.Int64 // reads that brought requests while others were unanswered
}

func (w *windowProbe) serve(t *testing.T, c net.Conn, batch int) {
	defer c.Close()
	buf := make([]byte, 1<<16)
	var received, answered int64
	partialLines := 0
	const linesPerGet = 5 // *2, $3, GET, $n, key
	reply := []byte("$1\r\nx\r\n")
	answer := func(n int64) bool {
		if n == 0 {
			return true
		}
		_, err := c.Write(bytes.Repeat(reply, int(n)))
		answered += n
		return err == nil
	}
	for {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := c.Read(buf)
		if n > 0 {
			if received > answered {
				w.refills.Add(1)
			}
			partialLines += bytes.Count(buf[:n], []byte("\n"))
			received += int64(partialLines / linesPerGet)
			partialLines %= linesPerGet
			if out := received - answered; out > w.maxOutstanding.Load() {
				w.maxOutstanding.Store(out)
			}
			if out := received - answered; out >= int64(batch) && !answer(out/2) {
				return
			}
			continue
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if !answer(received - answered) {
				return
			}
			continue
		}
		return
	}
}

// TestWindowKeepsBatchInFlight drives both pipelines against windowProbe:
// neither may ever have more than -b requests unanswered, and only the
// window sends new requests while replies are still owed.
func TestWindowKeepsBatchInFlight(t *testing.T) {
	for _, mode := range []string{PipelineBatch, PipelineWindow} {
		t.Run(mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			cfg := configFor(t, ln.Addr().String())
			cfg.Batch, cfg.Pipeline, cfg.DBSize = 64, mode, 1000
			p, err := cfg.plan()
			if err != nil {
				t.Fatal(err)
			}
			probe := &windowProbe{}
			served := make(chan struct{})
			go func() {
				defer close(served)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				probe.serve(t, c, cfg.Batch)
			}()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			conn, err := newSocket(nc)
			if err != nil {
				t.Fatal(err)
			}
			th := &offlineThread{conn: conn, batches: buildBatches(p, 1, 0), rr: newReplyReader(conn, readBufferBytes, p.op, false, p.ValueLength)}
			l := mustLoop(t, p, th)
			time.AfterFunc(600*time.Millisecond, func() { l.stop.Store(true) })
			l.run()
			l.close()
			<-served
			if th.err != nil {
				t.Fatalf("run: %v", th.err)
			}
			if c := th.rr.counts; c.hits == 0 || c.misses != 0 || c.errors != 0 {
				t.Fatalf("counts %+v: want hits only", c)
			}
			if got := probe.maxOutstanding.Load(); got > int64(cfg.Batch) || got < int64(cfg.Batch/2) {
				t.Errorf("most requests unanswered at once: got %d, want %d at most (and at least half)", got, cfg.Batch)
			}
			refills := probe.refills.Load()
			if mode == PipelineWindow && refills == 0 {
				t.Errorf("window: requests sent while replies were owed: got none, want some")
			}
			if mode == PipelineBatch && refills != 0 {
				t.Errorf("batch: requests sent while replies were owed: got %d, want none", refills)
			}
		})
	}
}

// TestWindowReadCap checks the bound on a split window's TCP reads: a
// group's worth of the mean reply seen, and none before a reply is seen
// or when the window is whole.
func TestWindowReadCap(t *testing.T) {
	tests := []struct {
		name               string
		batch, group       int
		bytes, repliesSeen int64
		want               int
	}{
		{"whole window", 64, 64, 103 * 640, 640, 0},
		{"nothing seen yet", 64, 16, 0, 0, 0},
		{"GET of 96-byte values", 64, 16, 103 * 640, 640, 103 * 16},
		{"mean of mixed lengths", 16, 4, 5*10 + 103*10, 20, 54 * 4},
		{"replies shorter than a byte on average", 8, 2, 0, 9, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &loopConn{win: windowState{group: tt.group}, replyBytes: tt.bytes, repliesSeen: tt.repliesSeen}
			if got := windowReadCap(c, tt.batch); got != tt.want {
				t.Errorf("windowReadCap: got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestWindowSplitsOnlyASingleConnection runs window cells of GETs against
// a real redis-server, over TCP and TLS, on one connection and on three,
// and counts the system calls and records: a cell's only connection reads
// at most a quarter of the window's replies per read(2) over TCP (after
// its first window, which teaches it the replies' length) and sends at
// most half of the window per TLS record; connections of a cell of three
// keep their window whole.
func TestWindowSplitsOnlyASingleConnection(t *testing.T) {
	r := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, aclUser...)
	plain := configFor(t, r.Addr)
	plain.Batch = 64
	mustLoad(t, &plain)
	for _, secure := range []bool{false, true} {
		for _, conns := range []int{1, 3} {
			cfg := plain
			name := "tcp"
			if secure {
				name, cfg = "tls", tlsConfigFor(t, r)
				cfg.Batch = plain.Batch
			}
			t.Run(fmt.Sprintf("%s/%d", name, conns), func(t *testing.T) {
				cfg.Pipeline = PipelineWindow
				p, err := cfg.plan()
				if err != nil {
					t.Fatal(err)
				}
				ts := make([]*offlineThread, conns)
				for i := range ts {
					conn, err := dial(context.Background(), p.addr, p.spec)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.conn.Close()
					ts[i] = &offlineThread{conn: conn, batches: buildBatches(p, conns, i), rr: newReplyReader(conn, readBufferBytes, p.op, false, p.ValueLength)}
				}
				l := mustLoop(t, p, ts...)
				time.AfterFunc(300*time.Millisecond, func() { l.stop.Store(true) })
				l.run()
				b := int64(p.Batch)
				for i, c := range l.conns {
					if c.t.err != nil {
						t.Fatalf("connection %d: %v", i, c.t.err)
					}
					replies := c.repliesSeen
					if replies < 20*b {
						t.Fatalf("connection %d: %d replies in the run, want at least %d to count on", i, replies, 20*b)
					}
					wantGroup := b
					if conns == 1 {
						wantGroup = b / windowReadGroups
						if secure {
							wantGroup = b / windowRecordGroups
						}
					}
					if got := int64(c.win.group); got != wantGroup {
						t.Errorf("connection %d: group of %d requests, want %d", i, got, wantGroup)
					}
					if conns > 1 {
						continue
					}
					if secure {
						sent := c.t.sent / int64(c.win.size)
						if perRecord := float64(sent) / float64(c.records); perRecord > float64(wantGroup) {
							t.Errorf("%d requests in %d records: %.1f per record, want at most %d", sent, c.records, perRecord, wantGroup)
						}
					} else if perRead := float64(replies-b) / float64(c.reads); perRead > float64(wantGroup) {
						t.Errorf("%d replies after the first window in %d reads: %.1f per read, want at most %d", replies-b, c.reads, perRead, wantGroup)
					}
				}
			})
		}
	}
}
