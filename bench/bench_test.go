package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// configFor points a small, fast configuration at addr.
func configFor(t *testing.T, addr string) Config {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Host = host
	cfg.Port, _ = strconv.Atoi(port)
	cfg.DBSize = 10007
	cfg.Batch = 100
	cfg.Threads = []int{2}
	cfg.LoadThreads = 3
	cfg.Runtime = 300 * time.Millisecond
	cfg.JSON = true
	cfg.ReportInterval = 200 * time.Millisecond
	return cfg
}

// runJSON runs cfg and decodes its JSON document.
// mustLoad sets cfg to load mode (Runtime 0) and loads its key space,
// failing the test with bench's output if the load fails.
func mustLoad(t *testing.T, cfg *Config) {
	t.Helper()
	cfg.Runtime = 0
	if _, human, err := runJSON(t, context.Background(), *cfg); err != nil {
		t.Fatalf("load: %v\n%s", err, human)
	}
}

func runJSON(t *testing.T, ctx context.Context, cfg Config) (*Report, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, cfg, &stdout, &stderr)
	rep := &Report{}
	if stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), rep); jerr != nil {
			t.Fatalf("stdout is not one JSON document: %v\n%s", jerr, stdout.String())
		}
	} else {
		rep = nil
	}
	return rep, stderr.String(), err
}

// redisInt sends one command and reads an integer reply.
func redisInt(t *testing.T, addr string, args ...string) int64 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := appendArrayHeader(nil, len(args))
	for _, a := range args {
		cmd = appendBulkString(cmd, a)
	}
	if _, err := c.Write(cmd); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("%v: reply %q, %v", args, line, err)
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(line[1:]), 10, 64)
	return v
}

func TestLoadIsExactAndVerifyPasses(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Runtime = 0 // load only
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, human)
	}
	if rep.Load == nil {
		t.Fatalf("load is null in the report")
	}
	if got, want := rep.Load.Acknowledged, cfg.DBSize; got != want {
		t.Errorf("acknowledged %d keys, want %d", got, want)
	}
	if got := redisInt(t, r.Addr, "DBSIZE"); got != cfg.DBSize {
		t.Errorf("DBSIZE %d after the load, want %d (dbsize %d over %d load threads)", got, cfg.DBSize, cfg.DBSize, cfg.LoadThreads)
	}
	if len(rep.Cells) != 0 {
		t.Errorf("--runtime 0 ran %d cells, want none", len(rep.Cells))
	}
	if !regexp.MustCompile(`\[Total time\]: [0-9.]+ ms for 10007 ops`).MatchString(human) {
		t.Errorf("human output lacks the [Total time] line for 10007 ops:\n%s", human)
	}

	for _, op := range []string{"GET", "MGET"} {
		cfg := configFor(t, r.Addr)
		cfg.SkipLoad = true
		cfg.Op = op
		cfg.Verify = true
		cfg.Threads = []int{1, 3}
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s --verify on a loaded redis: %v\n%s", op, err, human)
		}
		if rep.Load != nil {
			t.Errorf("-s still reported a load")
		}
		if len(rep.Cells) != 2 {
			t.Fatalf("%s: %d cells, want 2", op, len(rep.Cells))
		}
		for _, c := range rep.Cells {
			if c.Ops == 0 || c.Hits != c.Ops || c.Misses != 0 || c.Errors != 0 || c.Mismatches != 0 || !c.Verified {
				t.Errorf("%s t=%d: ops %d hits %d misses %d errors %d mismatches %d verified %v; want every op a verified hit",
					op, c.Threads, c.Ops, c.Hits, c.Misses, c.Errors, c.Mismatches, c.Verified)
			}
			if c.Ops%int64(cfg.Batch) != 0 {
				t.Errorf("%s t=%d: %d ops is not whole batches of %d", op, c.Threads, c.Ops, cfg.Batch)
			}
			if c.BytesSent == 0 || c.BytesReceived < c.Ops*int64(cfg.ValueLength) || c.ClientCPUSeconds <= 0 || c.Incomplete {
				t.Errorf("%s t=%d: bytes sent %d received %d cpu %v incomplete %v: implausible", op, c.Threads, c.BytesSent, c.BytesReceived, c.ClientCPUSeconds, c.Incomplete)
			}
		}
	}
}

func TestMissesAreCountedNotHidden(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.DBSize = 1000
	cfg.KeyLength = 4
	mustLoad(t, &cfg)
	// Twice the loaded range: half the keys were never written.
	cfg.DBSize = 2000
	cfg.SkipLoad = true
	cfg.Runtime = 300 * time.Millisecond
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, human)
	}
	c := rep.Cells[0]
	if c.Hits+c.Misses != c.Ops {
		t.Errorf("hits %d + misses %d != ops %d", c.Hits, c.Misses, c.Ops)
	}
	if share := float64(c.Misses) / float64(c.Ops); share < 0.45 || share > 0.55 {
		t.Errorf("misses are %.3f of ops, want about 0.5 (half the range unloaded)", share)
	}
	if !strings.Contains(human, "[Misses]: "+strconv.FormatInt(c.Misses, 10)) || !strings.Contains(human, "were misses") {
		t.Errorf("human output does not report the misses:\n%s", human)
	}
	cfg.Verify = true
	_, _, err = runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "misses") {
		t.Errorf("--verify over an unloaded range: got %v, want ErrVerify counting misses", err)
	}
}

// fakeServer is the one fake: a RESP server that answers GET with the
// loaded value except for exactly one reply, which real servers cannot be
// made to do.
func fakeServer(t *testing.T, valueLength int, wrongReply int64) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var served atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				bw := bufio.NewWriter(c)
				for {
					args, err := readCommand(br)
					if err != nil {
						return
					}
					switch strings.ToUpper(args[0]) {
					case "PING":
						bw.WriteString("+PONG\r\n")
					case "GET":
						k, _ := strconv.ParseUint(args[1], 10, 64)
						v := make([]byte, valueLength)
						fillValue(v, k)
						if served.Add(1) == wrongReply {
							v[len(v)-1] ^= 1
						}
						fmt.Fprintf(bw, "$%d\r\n%s\r\n", len(v), v)
					default:
						bw.WriteString("-ERR unknown command\r\n")
					}
					if br.Buffered() == 0 {
						if bw.Flush() != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func readCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || line[0] != '*' || n < 1 {
		return nil, fmt.Errorf("bad command header %q", line)
	}
	args := make([]string, n)
	for i := range args {
		hdr, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
		buf := make([]byte, size+2)
		if _, err := ioReadFull(br, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

func ioReadFull(br *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := br.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestVerifyCatchesOneWrongValue(t *testing.T) {
	addr := fakeServer(t, 8, 150)
	cfg := configFor(t, addr)
	cfg.SkipLoad = true
	cfg.Verify = true
	cfg.Runtime = 200 * time.Millisecond
	rep, human, err := runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("got %v, want ErrVerify\n%s", err, human)
	}
	c := rep.Cells[0]
	if c.Mismatches != 1 || c.Misses != 0 || c.Errors != 0 {
		t.Errorf("mismatches %d misses %d errors %d, want exactly 1 mismatch", c.Mismatches, c.Misses, c.Errors)
	}
	if !strings.Contains(err.Error(), "1 mismatched values") || !strings.Contains(human, "[Verify]: 1 mismatched values") {
		t.Errorf("the mismatch is not reported: err %v\n%s", err, human)
	}
}

func TestServerErrorReplyIsShown(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.DBSize = 100
	cfg.Op = "INCR"
	cfg.ValueLength = 20 // too large for a 64-bit integer
	rep, human, err := runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrReplies) || !strings.Contains(err.Error(), "ERR value is not an integer") {
		t.Fatalf("got %v, want ErrReplies showing the server's error\n%s", err, human)
	}
	if c := rep.Cells[0]; c.Errors == 0 || c.Errors != c.Ops || !strings.HasPrefix(c.FirstError, "ERR value is not an integer") {
		t.Errorf("errors %d of %d ops, first %q: want every INCR refused with the server's text", c.Errors, c.Ops, c.FirstError)
	}
	// Up to 18 digits the loaded values are valid INCR operands.
	cfg.ValueLength = 8
	if _, human, err := runJSON(t, context.Background(), cfg); err != nil {
		t.Errorf("INCR on 8-digit values: %v\n%s", err, human)
	}
}

func TestAuthFailures(t *testing.T) {
	r := testenv.MustRedisServer(t, "--requirepass", "s3cret")
	tests := []struct {
		auth string
		want string // "" means success
	}{
		{"wrong", "WRONGPASS"},
		{"", "requires a password (give --auth)"},
		{"s3cret", ""},
	}
	for _, tt := range tests {
		cfg := configFor(t, r.Addr)
		cfg.Auth = tt.auth
		cfg.Runtime = 0
		_, _, err := runJSON(t, context.Background(), cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("--auth %q: %v, want success", tt.auth, err)
		case tt.want != "" && (!errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), r.Addr)):
			t.Errorf("--auth %q: got %v, want ErrAuth naming %s and %q", tt.auth, err, r.Addr, tt.want)
		}
	}
}

func TestConnectionRefusedNamesAddress(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg := configFor(t, addr)
	rep, _, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "connect to "+addr+": connection refused") {
		t.Errorf("got %v, want a connection refused error naming %s", err, addr)
	}
	if rep != nil {
		t.Errorf("nothing was measured but a JSON document was printed")
	}
}

func TestServerClosingMidRunMarksIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Runtime = 20 * time.Second
	go func() {
		// Kill the server once the timed cell has done some GETs.
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < 100000 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		r.Cmd.Process.Signal(syscall.SIGKILL)
	}()
	start := time.Now()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "server closed the connection") && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("got %v, want the server closing named\n%s", err, human)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the run went on for %v after the server died", time.Since(start))
	}
	if rep == nil || len(rep.Cells) != 1 {
		t.Fatalf("report %+v: want the cell measured so far", rep)
	}
	if c := rep.Cells[0]; !c.Incomplete || c.Ops == 0 {
		t.Errorf("cell incomplete %v ops %d, want incomplete with the ops done so far", c.Incomplete, c.Ops)
	}
	if !strings.Contains(human, "[Incomplete]") {
		t.Errorf("human output does not say the cell is incomplete:\n%s", human)
	}
}

// commandsProcessed is the server's total_commands_processed, or -1.
func commandsProcessed(addr string) int64 {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return -1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	c.Write([]byte("*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n"))
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return -1
		}
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
}

func TestOnlinePercentilesAndHdrLog(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.OpWorkload = []string{"GET", "SET"}
	cfg.OpPercent = []int{50, 50}
	cfg.InFlight = 4
	cfg.Verify = true
	cfg.Runtime = time.Second
	cfg.HdrOut = filepath.Join(t.TempDir(), "lat.hlog")
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("online: %v\n%s", err, human)
	}
	o := rep.Online
	if o == nil || len(rep.Cells) != 0 {
		t.Fatalf("online %v cells %d: want the online object and no cells", o, len(rep.Cells))
	}
	l := o.LatencyMicros
	ordered := []float64{l.Min, l.P5, l.P50, l.P95, l.P99, l.P999, l.Max}
	for i := 1; i < len(ordered); i++ {
		if ordered[i] < ordered[i-1] {
			t.Errorf("percentiles not monotone: %+v", l)
		}
	}
	if l.Min <= 0 || l.Avg < l.Min || l.Avg > l.Max || l.P50 > 1e6 {
		t.Errorf("latencies implausible for loopback: %+v", l)
	}
	if o.Ops == 0 || o.Hits != o.Ops || o.Mismatches != 0 || o.Incomplete {
		t.Errorf("ops %d hits %d mismatches %d incomplete %v: want every op a verified hit", o.Ops, o.Hits, o.Mismatches, o.Incomplete)
	}
	rows := regexp.MustCompile(`(?m)^[0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9]+; [0-9]+; [0-9.]+$`).FindAllString(human, -1)
	if len(rows) < 3 || !strings.Contains(human, onlineHeader) {
		t.Errorf("want the header and a row every 200 ms over 1 s, got %d rows:\n%s", len(rows), human)
	}
	logged := hlogCount(t, cfg.HdrOut)
	if logged != o.Ops {
		t.Errorf("--hdr-out holds %d latencies, want one per op (%d)", logged, o.Ops)
	}
}

func TestOnlineRateAndUntilInterrupted(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad = true
	cfg.Online = true
	cfg.Rate = 2000
	cfg.InFlight = 16 // slots never hold the pace back
	cfg.Runtime = -1  // until ctx ends
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rep, human, err := runJSON(t, ctx, cfg)
	if err != nil {
		t.Fatalf("--runtime -1 ended by the context: %v, want a clean end\n%s", err, human)
	}
	o := rep.Online
	// The offered load is paced: about 2000 ops/s, never a closed-loop
	// flood. The lower bound is loose: a loaded machine may fall behind.
	if rate := float64(o.Ops) / o.Seconds; rate < 1000 || rate > 2600 || o.Incomplete {
		t.Errorf("at --rate 2000: %d ops in %.2f s = %.0f ops/s (incomplete %v), want about 2000", o.Ops, o.Seconds, rate, o.Incomplete)
	}
	if !strings.Contains(human, "intended send time") {
		t.Errorf("rate mode does not say latency counts from the intended send time:\n%s", human)
	}
}

// TestSendReceiveLoopAllocatesNothing runs whole batches, and whole
// windows (filled, then drained on stop), of verified GETs on three
// connections of one event loop against redis-server and counts
// allocations.
func TestSendReceiveLoopAllocatesNothing(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	for _, mode := range []string{PipelineBatch, PipelineWindow} {
		t.Run(mode, func(t *testing.T) {
			cfg.Verify, cfg.Pipeline = true, mode
			p, err := cfg.plan()
			if err != nil {
				t.Fatal(err)
			}
			ts := make([]*offlineThread, 3)
			for i := range ts {
				conn, err := dial(context.Background(), p.addr, "")
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
			if allocs != 0 {
				t.Errorf("a %s of %d GETs on each of %d connections sent and its replies parsed allocated %v times, want 0", mode, p.Batch, len(ts), allocs)
			}
		})
	}
}

func TestServerClosingMidOnlineRunMarksIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.InFlight = 8
	cfg.Runtime = 20 * time.Second
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < 30000 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		r.Cmd.Process.Signal(syscall.SIGKILL)
	}()
	start := time.Now()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "stopped after") {
		t.Fatalf("got %v, want the online run stopped by the server closing\n%s", err, human)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the run went on for %v after the server died", time.Since(start))
	}
	if o := rep.Online; o == nil || !o.Incomplete || o.Ops == 0 {
		t.Errorf("online result %+v: want incomplete with the ops done so far", o)
	}
}

func TestInterruptedCellIsIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad = true
	cfg.Runtime = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once the timed window has done some GETs.
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < 50000 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	rep, _, err := runJSON(t, ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the interruption reported", err)
	}
	if c := rep.Cells[0]; !c.Incomplete || c.Ops == 0 || c.Seconds > 5 {
		t.Errorf("cell incomplete %v ops %d seconds %v: want incomplete, prompt, with the ops done", c.Incomplete, c.Ops, c.Seconds)
	}
}

// TestRateChargesStallsToEveryDelayedOp stalls a real redis-server for
// 300 ms with DEBUG SLEEP during a paced run. Ops due during the stall are
// about a fifth of the run; measured from their due times they push the
// 95th percentile to about 225 ms. A client that measured from the actual
// send time (coordinated omission) would see one slow op and a p95 of
// microseconds.
func TestRateChargesStallsToEveryDelayedOp(t *testing.T) {
	r := testenv.MustRedisServer(t, "--enable-debug-command", "yes")
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.Threads = []int{1}
	cfg.Rate = 2000
	cfg.Runtime = 1500 * time.Millisecond
	before := commandsProcessed(r.Addr)
	go func() {
		// Stall about half a second into the run (the load is ~100 MSETs).
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < before+1100 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		redisSimple(t, r.Addr, "DEBUG", "SLEEP", "0.3")
	}()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, human)
	}
	l := rep.Online.LatencyMicros
	if l.Max < 250e3 || l.P95 < 50e3 {
		t.Errorf("after a 300 ms stall at 2000 ops/s: p95 %.0f µs, max %.0f µs; want p95 ≥ 50 ms and max ≥ 250 ms (latency from the intended send time)", l.P95, l.Max)
	}
}

// redisSimple sends one command and reads a one-line reply.
func redisSimple(t *testing.T, addr string, args ...string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer c.Close()
	cmd := appendArrayHeader(nil, len(args))
	for _, a := range args {
		cmd = appendBulkString(cmd, a)
	}
	c.Write(cmd)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}
