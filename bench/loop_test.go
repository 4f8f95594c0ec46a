package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// mustLoop puts ts on one clientLoop of their own, closed when the test
// ends; its stop and cut flags are fresh.
func mustLoop(t *testing.T, p *plan, ts ...*offlineThread) *clientLoop {
	t.Helper()
	var stop, cut atomic.Bool
	loops, err := newClientLoops(p, ts, 1, &stop, &cut, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(loops[0].close)
	return loops[0]
}

// getCalls is the number of GETs the redis-server at addr has executed.
func getCalls(t *testing.T, addr string) int64 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n"))
	br := bufio.NewReader(c)
	header, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(header, "$") {
		t.Fatalf("INFO commandstats: %q %v", header, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(header[1:]))
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_get:calls="); ok {
			v, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			return v
		}
	}
	return 0
}

// runCountedCell runs cfg's one cell of verified GETs and checks that
// every GET the redis-server at addr executed meanwhile is one counted,
// verified hit.
func runCountedCell(t *testing.T, cfg Config, addr string) CellResult {
	t.Helper()
	before := getCalls(t, addr)
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, human)
	}
	c := rep.Cells[0]
	executed := getCalls(t, addr) - before
	if c.Ops == 0 || c.Ops != executed || c.Hits != c.Ops || c.Mismatches != 0 {
		t.Errorf("ops %d hits %d mismatches %d, server executed %d GETs: want every one a verified hit", c.Ops, c.Hits, c.Mismatches, executed)
	}
	return c
}

// TestLoopCountsEveryReply drives several connections per loop against
// redis-server in both pipelines: every GET the server executed is one
// counted, verified hit, and the bytes sent are exactly those requests.
func TestLoopCountsEveryReply(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	request := len(appendCommand(nil, opGet, []uint64{0}, 5, 0)) // configFor's 10007 keys have 5 digits
	for _, mode := range []string{PipelineBatch, PipelineWindow} {
		for _, tc := range []struct {
			loops int
			nap   time.Duration
		}{{1, IdleNapAuto}, {3, IdleNapAuto}, {1, 50 * time.Microsecond}, {1, 0}} {
			t.Run(fmt.Sprintf("%s/loops=%d/nap=%v", mode, tc.loops, tc.nap), func(t *testing.T) {
				cfg := configFor(t, r.Addr)
				cfg.SkipLoad, cfg.Verify, cfg.Pipeline, cfg.Loops, cfg.IdleNap = true, true, mode, tc.loops, tc.nap
				cfg.Threads = []int{7}
				c := runCountedCell(t, cfg, r.Addr)
				if c.ClientLoops != tc.loops {
					t.Errorf("%d loops ran, want %d", c.ClientLoops, tc.loops)
				}
				want := map[time.Duration]string{IdleNapAuto: "auto", 0: "park"}[tc.nap]
				if want == "" {
					want = "nap"
				}
				if c.IdleWait != want {
					t.Errorf("reported idle wait %q, want %q", c.IdleWait, want)
				}
				if c.IdleNaps+c.IdleParks < c.IdleWaits {
					t.Errorf("%d waits ended by %d naps and %d parks: want every wait to have napped or parked", c.IdleWaits, c.IdleNaps, c.IdleParks)
				}
				if tc.nap == 0 && c.IdleNaps != 0 {
					t.Errorf("%d naps with --idle-nap 0, want none", c.IdleNaps)
				}
				if c.BytesSent != c.Ops*int64(request) {
					t.Errorf("bytes sent %d for %d GETs of %d bytes: want %d", c.BytesSent, c.Ops, request, c.Ops*int64(request))
				}
				if mode == PipelineBatch && c.Ops%int64(cfg.Batch) != 0 {
					t.Errorf("batch: %d ops is not a whole number of %d-GET batches", c.Ops, cfg.Batch)
				}
			})
		}
	}
}

// serveTCP listens on a free local port until the test ends and runs
// handle on its own goroutine for every connection accepted.
func serveTCP(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return l.Addr().String()
}

// chunkProxy forwards to target, passing requests on as they come but
// writing every reply in pieces of 1 to 13 bytes, each its own segment,
// so that replies reach the client split at every possible place.
func chunkProxy(t *testing.T, target string) string {
	return serveTCP(t, func(c net.Conn) {
		defer c.Close()
		s, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer s.Close()
		go func() {
			defer c.Close()
			defer s.Close()
			io.Copy(s, c)
		}()
		buf := make([]byte, 1<<16)
		piece := 1
		for {
			n, err := s.Read(buf)
			for b := buf[:n]; len(b) > 0; {
				k := min(piece, len(b))
				if _, err := c.Write(b[:k]); err != nil {
					return
				}
				b = b[k:]
				piece = piece%13 + 1
			}
			if err != nil {
				return
			}
		}
	})
}

// TestLoopReassemblesSplitReplies reads verified GETs through chunkProxy,
// and values larger than the read buffer straight from redis-server: no
// reply is lost, miscounted or mismatched however it is split.
func TestLoopReassemblesSplitReplies(t *testing.T) {
	r := testenv.MustRedisServer(t)
	for _, tc := range []struct {
		name        string
		valueLength int
		proxied     bool
	}{{"split", 40, true}, {"larger-than-buffer", 3*readBufferBytes + 5, false}} {
		cfg := configFor(t, r.Addr)
		cfg.ValueLength, cfg.DBSize, cfg.Batch = tc.valueLength, 64, 8
		mustLoad(t, &cfg)
		addr := r.Addr
		if tc.proxied {
			addr = chunkProxy(t, r.Addr)
		}
		for _, mode := range []string{PipelineBatch, PipelineWindow} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				cfg := configFor(t, addr)
				cfg.ValueLength, cfg.DBSize, cfg.Batch = tc.valueLength, 64, 8
				cfg.SkipLoad, cfg.Verify, cfg.Pipeline = true, true, mode
				cfg.Threads = []int{3}
				c := runCountedCell(t, cfg, r.Addr)
				if want := c.Ops * int64(len(appendBulkHeader(nil, tc.valueLength))+tc.valueLength+2); c.BytesReceived != want {
					t.Errorf("bytes received %d, want %d for %d replies", c.BytesReceived, want, c.Ops)
				}
			})
		}
	}
}

// silentServer answers the connection handshake's PING, then reads
// requests and never replies.
func silentServer(t *testing.T) string {
	return serveTCP(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := readCommand(br); err != nil {
			return
		}
		c.Write([]byte("+PONG\r\n"))
		io.Copy(io.Discard, br)
	})
}

// TestLoopInterruptWakesIdleLoops ends a cell whose server never answers:
// every loop is parked with nothing ready, and the context's end must
// still wake them and end the cell at once, marked incomplete.
func TestLoopInterruptWakesIdleLoops(t *testing.T) {
	for _, mode := range []string{PipelineBatch, PipelineWindow} {
		t.Run(mode, func(t *testing.T) {
			cfg := configFor(t, silentServer(t))
			cfg.SkipLoad, cfg.Pipeline, cfg.Loops = true, mode, 2
			cfg.Threads = []int{5}
			cfg.Runtime = 30 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			rep, _, err := runJSON(t, ctx, cfg)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the interruption reported", err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the cell ended %v after the interruption, want at once", took)
			}
			if rep == nil || len(rep.Cells) != 1 || !rep.Cells[0].Incomplete || rep.Cells[0].Ops != 0 {
				t.Errorf("report %+v: want one incomplete cell with no ops", rep)
			}
		})
	}
}

// TestSendReceiveLoopAllocatesNothing runs whole batches, and whole
// windows (filled, then drained on stop), of verified GETs on three
// connections of one event loop and on a cell's only connection (whose
// window is split), against redis-server, over TCP and over TLS as an ACL
// user, and counts allocations.
func TestSendReceiveLoopAllocatesNothing(t *testing.T) {
	r := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, aclUser...)
	plain := configFor(t, r.Addr)
	plain.Batch = 64
	mustLoad(t, &plain)
	for _, secure := range []bool{false, true} {
		for _, mode := range []string{PipelineBatch, PipelineWindow} {
			for _, conns := range []int{3, 1} {
				name := fmt.Sprintf("%s/%d", mode, conns)
				cfg := plain
				if secure {
					name, cfg = "tls "+name, tlsConfigFor(t, r)
					cfg.Batch = plain.Batch
				}
				t.Run(name, func(t *testing.T) {
					cfg.Verify, cfg.Pipeline = true, mode
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
						ts[i] = &offlineThread{conn: conn, batches: buildBatches(p, len(ts), i), rr: newReplyReader(conn, readBufferBytes, p.op, true, p.ValueLength)}
					}
					l := mustLoop(t, p, ts...)
					l.stop.Store(true) // one batch, or one window, per connection and run
					l.run()
					allocs := testing.AllocsPerRun(200, l.run)
					for _, th := range ts {
						if th.err != nil {
							t.Fatal(th.err)
						}
						if c := th.rr.counts; c.hits == 0 || c.mismatches != 0 || c.misses != 0 {
							t.Errorf("counts %+v: want verified hits", c)
						}
					}
					if secure && raceEnabled {
						t.Logf("%s: %v allocations, not checked under -race (crypto/tls's sync.Pool drops buffers there)", name, allocs)
					} else if allocs != 0 {
						t.Errorf("a %s of %d GETs on each of %d connections sent and its replies parsed allocated %v times, want 0", name, p.Batch, len(ts), allocs)
					}
				})
			}
		}
	}
}
