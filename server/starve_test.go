package server

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// Scripts that try to make the server hold memory without bound, run
// against a tierbench server process (in memory and tiered) and, where
// Redis has the same knob, a redis-server with the same setting. Each
// checks the server's peak RSS growth (VmHWM at the end minus VmRSS
// before the script) against a stated bound and against 2x Redis's, with
// a client pinging the server throughout.

// memTarget is one server process a script runs against.
type memTarget struct {
	name string
	addr string
	pid  int
}

// tierbenchTargets starts tierbench server processes, in memory and
// tiered on libaio and on uring, with the flags given.
func tierbenchTargets(t *testing.T, flags ...string) []memTarget {
	var out []memTarget
	for _, tc := range []struct {
		name   string
		tiered bool
		extra  []string
	}{
		{"tierbench-memory", false, nil},
		{"tierbench-tiered", true, nil}, // libaio, the default backend
		// uring has an idle path on which a lone read completes inside
		// its submission: the budgets must hold there too.
		{"tierbench-tiered-uring", true, []string{"--device-io-backend", "uring"}},
	} {
		p := startServerProcess(t, tc.tiered, append(slices.Clone(flags), tc.extra...)...)
		out = append(out, memTarget{name: tc.name, addr: p.addr, pid: p.pid})
	}
	return out
}

func redisTarget(t *testing.T, extra ...string) memTarget {
	r := testenv.MustRedisServer(t, extra...)
	return memTarget{name: "redis-server", addr: r.Addr, pid: r.Cmd.Process.Pid}
}

// pinger sends PING every 50 ms until stopped; stop returns the slowest
// answer, and fails the test if one took over 5 s or never came (an EXEC
// runs alone, so a PING waits for it, on Redis too; Redis is only
// measured).
func pinger(t *testing.T, addr string, enforce bool) (stop func() time.Duration) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("pinger: dial %s: %v", addr, err)
	}
	r := bufio.NewReader(nc)
	done := make(chan struct{})
	var slowest time.Duration
	var failure error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer nc.Close()
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			t0 := time.Now()
			nc.SetDeadline(t0.Add(10 * time.Second))
			if _, err := nc.Write([]byte("PING\r\n")); err != nil {
				failure = err
				return
			}
			line, err := r.ReadString('\n')
			if err != nil || line != "+PONG\r\n" {
				failure = fmt.Errorf("PING: got %q, %v", line, err)
				return
			}
			slowest = max(slowest, time.Since(t0))
		}
	}()
	return func() time.Duration {
		close(done)
		wg.Wait()
		if failure != nil {
			t.Errorf("the server stopped answering PING: %v", failure)
		}
		if enforce && slowest > 5*time.Second {
			t.Errorf("a PING took %v, want at most 5 s", slowest)
		}
		return slowest
	}
}

// measure runs script against each target and returns each one's peak
// RSS growth in bytes, with PING answered throughout.
func measure(t *testing.T, targets []memTarget, script func(t *testing.T, target memTarget)) map[string]int64 {
	grew := map[string]int64{}
	for _, tg := range targets {
		before := statusBytes(t, tg.pid, "VmRSS")
		stop := pinger(t, tg.addr, tg.name != "redis-server")
		script(t, tg)
		slowest := stop()
		peak := statusBytes(t, tg.pid, "VmHWM")
		grew[tg.name] = peak - before
		t.Logf("%s: RSS %d MiB before, peak %d MiB: grew %d MiB; slowest PING %v",
			tg.name, before>>20, peak>>20, (peak-before)>>20, slowest.Round(time.Millisecond))
	}
	return grew
}

// checkGrowth holds each tierbench target's growth to bound and, with
// vsRedis, to twice Redis's growth for the same script plus slack for the
// fixed costs (a Go runtime's arenas, the store's buffers); without it
// the ratio is only logged.
func checkGrowth(t *testing.T, grew map[string]int64, bound int64, vsRedis bool) {
	redis, withRedis := grew["redis-server"]
	const slack = 32 << 20
	for name, g := range grew {
		if name == "redis-server" {
			continue
		}
		if g > bound {
			t.Errorf("%s: RSS grew %d MiB, want at most %d MiB", name, g>>20, bound>>20)
		}
		if withRedis {
			t.Logf("%s: RSS growth %.1fx redis-server's", name, float64(g)/float64(max(redis, 1)))
		}
		if vsRedis && withRedis && g > 2*redis+slack {
			t.Errorf("%s: RSS grew %d MiB, redis-server's %d MiB: want at most twice Redis's plus %d MiB", name, g>>20, redis>>20, slack>>20)
		}
	}
}

// setBig stores value under key on target, then (tiered) pushes it out
// of the 16 MiB in memory so GETs of it read the device.
func setBig(t *testing.T, addr, key string, valueBytes int) {
	c := dialAddr(t, addr)
	defer c.nc.Close()
	if got := c.do("SET", key, strings.Repeat("v", valueBytes)); got != "+OK\r\n" {
		t.Fatalf("SET %s of %d bytes: got %q", key, valueBytes, got)
	}
	for i := 0; i < 6; i++ {
		if got := c.do("SET", "push:"+strconv.Itoa(i), strings.Repeat("p", 4<<20)); got != "+OK\r\n" {
			t.Fatalf("SET push:%d: got %q", i, got)
		}
	}
}

// TestBigBulkHeadersHoldNoMemory: 1000 connections each declare a
// 512 MiB bulk and send 1 KiB of it. The server reserves memory as the
// bytes arrive: its RSS grows by at most 64 MiB (it reserved 512 MiB a
// connection before a byte arrived).
func TestBigBulkHeadersHoldNoMemory(t *testing.T) {
	const conns = 1000
	script := func(t *testing.T, tg memTarget) {
		req := []byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$536870912\r\n" + strings.Repeat("x", 1024))
		var ncs []net.Conn
		for i := 0; i < conns; i++ {
			nc, err := net.Dial("tcp", tg.addr)
			if err != nil {
				t.Fatalf("%s: connection %d: %v", tg.name, i, err)
			}
			defer nc.Close()
			if _, err := nc.Write(req); err != nil {
				t.Fatalf("%s: connection %d: write: %v", tg.name, i, err)
			}
			ncs = append(ncs, nc)
		}
		// Every connection is read from: INFO counts them all.
		c := dialAddr(t, tg.addr)
		defer c.nc.Close()
		deadline := time.Now().Add(20 * time.Second)
		for infoInt(t, c.do("INFO", "clients"), "connected_clients") < conns+1 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
	}
	targets := append(tierbenchTargets(t), redisTarget(t))
	checkGrowth(t, measure(t, targets, script), 64<<20, true)
}

// TestNeverReadingClient: a client pipelines 96 GETs of a 4 MiB value
// (384 MiB of replies) and reads nothing. The server's writes wait for
// the client, holding at most MaxPendingReadBytes of replies and reads,
// while PING is answered: RSS grows by at most 128 MiB (the tiered server
// grew 1268 MiB for 256 GETs, every reply gathered before the first
// write). Redis, with the same client-output-buffer-limit, buffers up to
// the hard limit and closes the client.
func TestNeverReadingClient(t *testing.T) {
	const gets, valueBytes = 96, 4 << 20
	script := func(t *testing.T, tg memTarget) {
		setBig(t, tg.addr, "big", valueBytes)
		nc, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		var req []byte
		for i := 0; i < gets; i++ {
			req = append(req, encodeArgs("GET", "big")...)
		}
		nc.Write(req)
		time.Sleep(time.Second)
	}
	limit := "normal 256mb 64mb 60"
	targets := append(tierbenchTargets(t, "--client-output-buffer-limit", limit), redisTarget(t, "--client-output-buffer-limit", limit))
	checkGrowth(t, measure(t, targets, script), 128<<20, true)
}

// TestTimeoutClosesIdleClients: with CONFIG SET timeout 1 an idle client
// is closed within a few seconds and an active one is not, on tierbench
// and on Redis alike; CONFIG GET shows the value.
func TestTimeoutClosesIdleClients(t *testing.T) {
	targets := []memTarget{redisTarget(t)}
	s := startServer(t, Config{})
	targets = append(targets, memTarget{name: "tierbench", addr: s.Addr().String()})
	for _, tg := range targets {
		admin := dialAddr(t, tg.addr)
		if got := admin.do("CONFIG", "SET", "timeout", "1"); got != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET timeout 1: got %q", tg.name, got)
		}
		if got := admin.do("CONFIG", "GET", "timeout"); got != array(bulk("timeout"), bulk("1")) {
			t.Errorf("%s: CONFIG GET timeout: got %q", tg.name, got)
		}
		idle, active := dialAddr(t, tg.addr), dialAddr(t, tg.addr)
		idle.do("PING")
		for i := 0; i < 12; i++ { // 3 s of activity
			if got := active.do("PING"); got != "+PONG\r\n" {
				t.Fatalf("%s: an active client's PING after %d ms: got %q", tg.name, 250*i, got)
			}
			time.Sleep(250 * time.Millisecond)
		}
		idle.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := idle.r.ReadByte(); err == nil {
			t.Errorf("%s: the idle client got %q, want the connection closed", tg.name, b)
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the idle client is still open 8 s after its last command, with timeout 1", tg.name)
		}
		active.do("CONFIG", "SET", "timeout", "0")
	}
}

// starveLimit is the client-output-buffer-limit the scripts below give
// tierbench and Redis alike: small, so that Redis reaches it in seconds.
const starveLimit = "normal 64mb 16mb 60"

// TestPipelineOfBigGets: 4096 pipelined GETs of a 4 MiB value (16 GiB of
// replies); the client reads the first 32 replies, checks them, and
// leaves. The tiered server holds at most MaxPendingReadBytes of device
// reads and their replies (it queued every reply: 256 GETs grew it by
// 1268 MiB), the in-memory one about one reply, so RSS grows by at most
// 256 MiB, PING answered throughout, and by at most twice what Redis
// grows given the same output limit.
func TestPipelineOfBigGets(t *testing.T) {
	const gets, valueBytes, read = 4096, 4 << 20, 32
	script := func(t *testing.T, tg memTarget) {
		setBig(t, tg.addr, "big", valueBytes)
		c := dialAddr(t, tg.addr)
		var req []byte
		for i := 0; i < gets; i++ {
			req = append(req, encodeArgs("GET", "big")...)
		}
		go c.nc.Write(req)
		want := bulk(strings.Repeat("v", valueBytes))
		for i := 0; i < read; i++ {
			b, err := readReply(c.r)
			if err != nil {
				if tg.name == "redis-server" {
					break // Redis may have closed it at its output limit
				}
				t.Fatalf("%s: reply %d: %v", tg.name, i, err)
			}
			if string(b) != want {
				t.Fatalf("%s: reply %d: %d bytes, not the value", tg.name, i, len(b))
			}
		}
		time.Sleep(500 * time.Millisecond)
		c.nc.Close()
		time.Sleep(500 * time.Millisecond)
	}
	targets := append(tierbenchTargets(t, "--client-output-buffer-limit", starveLimit), redisTarget(t, "--client-output-buffer-limit", starveLimit))
	checkGrowth(t, measure(t, targets, script), 256<<20, true)
}

// TestMultiOfBigGets: MULTI, 10 000 GETs of a 4 MiB value, EXEC. The
// replies pass the output buffer's hard limit: the client is closed
// without the EXEC reply, on tierbench as on Redis, PING answered
// throughout. Each server runs the script three times, fresh each time,
// and its median RSS growth is held to 192 MiB (the 64 MiB limit, 16 MiB
// of device reads, the stored values: measured about 100 MiB in memory
// and 135 MiB tiered) and to twice redis-server's median for the same
// script and limit (93 MiB), with no slack. EXEC gathered its replies in
// one buffer it grew, copying as it went: the tiered server grew 3.6 to
// 4.1x Redis's, the in-memory one 1.8x.
func TestMultiOfBigGets(t *testing.T) {
	const gets, valueBytes, runs = 10000, 4 << 20, 3
	script := func(t *testing.T, tg memTarget) {
		setBig(t, tg.addr, "big", valueBytes)
		c := dialAddr(t, tg.addr)
		defer c.nc.Close()
		req := encodeArgs("MULTI")
		for i := 0; i < gets; i++ {
			req = append(req, encodeArgs("GET", "big")...)
		}
		req = append(req, encodeArgs("EXEC")...)
		go c.nc.Write(req)
		// +OK, +QUEUED for each GET (those not yet written when the
		// client is closed are dropped with the rest), then EOF.
		c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := 0; ; i++ {
			got, err := readReply(c.r)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%s: no close within 30 s after %d replies", tg.name, i)
			}
			if err != nil {
				break
			}
			if want := map[bool]string{true: "+OK\r\n", false: "+QUEUED\r\n"}[i == 0]; string(got) != want {
				t.Fatalf("%s: reply %d (0: MULTI, then the GETs, then EXEC): got %d bytes starting %.20q, want %q, then the client closed at its output limit", tg.name, i, len(got), got, want)
			}
		}
		if tg.name == "redis-server" {
			return // Redis 7.0 does not count these disconnections
		}
		admin := dialAddr(t, tg.addr)
		defer admin.nc.Close()
		if n := infoInt(t, admin.do("INFO", "stats"), "client_output_buffer_limit_disconnections"); n != 1 {
			t.Errorf("%s: client_output_buffer_limit_disconnections = %d, want 1", tg.name, n)
		}
	}
	targets := func(t *testing.T) []memTarget {
		return append(tierbenchTargets(t, "--client-output-buffer-limit", starveLimit), redisTarget(t, "--client-output-buffer-limit", starveLimit))
	}
	grew := medianGrowth(t, runs, targets, script)
	for name, g := range grew {
		t.Logf("%s: median RSS growth %d MiB", name, g>>20)
	}
	checkGrowth(t, grew, 192<<20, false)
	for name, g := range grew {
		if redis := grew["redis-server"]; name != "redis-server" && g > 2*redis {
			t.Errorf("%s: median RSS growth %d MiB, redis-server's %d MiB: want at most twice Redis's", name, g>>20, redis>>20)
		}
	}
}

// medianGrowth runs script runs times, each time on fresh targets, and
// returns each target's median RSS growth.
func medianGrowth(t *testing.T, runs int, targets func(t *testing.T) []memTarget, script func(t *testing.T, target memTarget)) map[string]int64 {
	all := map[string][]int64{}
	for i := 0; i < runs; i++ {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) {
			for name, g := range measure(t, targets(t), script) {
				all[name] = append(all[name], g)
			}
		})
	}
	if t.Failed() {
		t.FailNow()
	}
	med := map[string]int64{}
	for name, gs := range all {
		slices.Sort(gs)
		med[name] = gs[len(gs)/2]
	}
	return med
}
