package server

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/internal/testenv"
)

// redisCLI runs the real redis-cli against s and returns its output.
func redisCLI(t *testing.T, s *Server, args ...string) string {
	t.Helper()
	bin := testenv.MustLookPath(t, "redis-cli")
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.port())}, args...)
	out, err := exec.Command(bin, full...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

func TestRedisCLI(t *testing.T) {
	s := startServer(t, Config{})
	tests := []struct {
		args []string
		want string // exact output; or a regexp when it starts with "~"
	}{
		{[]string{"PING"}, "PONG"},
		{[]string{"SET", "greeting", "hello world"}, "OK"},
		{[]string{"GET", "greeting"}, "hello world"},
		{[]string{"GET", "nope"}, ""},
		{[]string{"MSET", "a", "1", "b", "2"}, "OK"},
		{[]string{"MGET", "a", "nope", "b"}, "1\n\n2"},
		{[]string{"INCRBY", "a", "9"}, "10"},
		{[]string{"EXISTS", "a", "b", "nope"}, "2"},
		{[]string{"DEL", "b"}, "1"},
		{[]string{"DBSIZE"}, "2"},
		{[]string{"SET", "k", "v", "EX", "10", "NX"}, "OK"},
		{[]string{"TTL", "k"}, "10"},
		{[]string{"DEL", "k"}, "1"},
		{[]string{"FOO", "bar"}, "ERR unknown command 'FOO', with args beginning with: 'bar' "},
		{[]string{"INFO", "store"}, `~(?s)^# Store\r?\nLog\.BeginAddress:\d+.*Log\.TailAddress:\d+`},
		{[]string{"INFO", "keyspace"}, "~db0:keys=2,expires=0,avg_ttl=0"},
		{[]string{"CONFIG", "GET", "save"}, "save"},
		{[]string{"COMMAND", "COUNT"}, strconv.Itoa(len(commands))},
		{[]string{"--no-raw", "GET", "greeting"}, `"hello world"`},
		{[]string{"--no-raw", "DBSIZE"}, "(integer) 2"},
		{[]string{"FLUSHALL"}, "OK"},
		{[]string{"DBSIZE"}, "0"},
	}
	for _, tt := range tests {
		got := redisCLI(t, s, tt.args...)
		if re, ok := strings.CutPrefix(tt.want, "~"); ok {
			if !regexp.MustCompile(re).MatchString(got) {
				t.Errorf("redis-cli %q: got %q, want a match of %s", tt.args, got, re)
			}
		} else if got != tt.want {
			t.Errorf("redis-cli %q: got %q, want %q", tt.args, got, tt.want)
		}
	}

	// Interactive use: redis-cli reads commands from stdin.
	cmd := exec.Command(testenv.MustLookPath(t, "redis-cli"), "-p", strconv.Itoa(s.port()))
	cmd.Stdin = strings.NewReader("SET x 5\nINCR x\nGET x\n")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "OK\n6\n6\n" {
		t.Errorf("redis-cli with commands on stdin: got %q, %v; want \"OK\\n6\\n6\\n\"", out, err)
	}
}

func TestRedisCLIAuth(t *testing.T) {
	s := startServer(t, Config{Auth: "pw"})
	if got := redisCLI(t, s, "GET", "a"); got != "NOAUTH Authentication required." {
		t.Errorf("redis-cli without -a: got %q, want the NOAUTH error", got)
	}
	if got := redisCLI(t, s, "--no-auth-warning", "-a", "wrong", "GET", "a"); !strings.Contains(got, "WRONGPASS") {
		t.Errorf("redis-cli -a wrong: got %q, want WRONGPASS", got)
	}
	if got := redisCLI(t, s, "--no-auth-warning", "-a", "pw", "SET", "a", "1"); got != "OK" {
		t.Errorf("redis-cli -a pw SET: got %q, want OK", got)
	}
}

// TestRedisBenchmark runs the real redis-benchmark, pipelined, against the
// server: it must report a rate for both tests and see no error.
func TestRedisBenchmark(t *testing.T) {
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			cfg := Config{ScatterGatherGet: true}
			if tiered {
				cfg.Store = tieredStore(t, "native", "libaio")
			}
			s := startServer(t, cfg)
			bin := testenv.MustLookPath(t, "redis-benchmark")
			cmd := exec.Command(bin, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port()),
				"-t", "get,set", "-n", "20000", "-P", "16", "-r", "5000", "-d", "96", "-q")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("redis-benchmark: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			out := stdout.String() + stderr.String()
			for _, test := range []string{"SET", "GET"} {
				m := regexp.MustCompile(`(?m)` + test + `: ([0-9.]+) requests per second`).FindStringSubmatch(out)
				if m == nil {
					t.Errorf("redis-benchmark: no %s rate in\n%s", test, out)
					continue
				}
				if rate, _ := strconv.ParseFloat(m[1], 64); rate <= 0 {
					t.Errorf("redis-benchmark %s: rate %s, want above zero", test, m[1])
				}
			}
			for _, bad := range []string{"ERR", "rror", "WARN"} {
				if strings.Contains(out, bad) {
					t.Errorf("redis-benchmark output contains %q:\n%s", bad, out)
				}
			}
			if keys := s.Store().Stats().Keys; keys < 1000 || keys > 5000 {
				t.Errorf("keys after redis-benchmark SET with -r 5000 = %d, want between 1000 and 5000", keys)
			}
		})
	}
}

// TestGoRedis drives the server with github.com/redis/go-redis/v9 as an
// application would: default options (it tries HELLO 3 and falls back to
// RESP2), single commands, a pipeline, and a password.
func TestGoRedis(t *testing.T) {
	s := startServer(t, Config{Auth: "pw", ScatterGatherGet: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String(), Password: "pw"})
	defer rdb.Close()

	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	if err := rdb.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := rdb.Get(ctx, "a").Result(); err != nil || got != "1" {
		t.Errorf("GET a: got %q, %v; want 1", got, err)
	}
	if _, err := rdb.Get(ctx, "nope").Result(); err != redis.Nil {
		t.Errorf("GET nope: got error %v, want redis.Nil", err)
	}
	if got, err := rdb.IncrBy(ctx, "a", 41).Result(); err != nil || got != 42 {
		t.Errorf("INCRBY: got %d, %v; want 42", got, err)
	}
	if err := rdb.MSet(ctx, "b", "2", "c", "3").Err(); err != nil {
		t.Fatalf("MSET: %v", err)
	}
	vals, err := rdb.MGet(ctx, "a", "b", "nope", "c").Result()
	if err != nil || fmt.Sprint(vals) != "[42 2 <nil> 3]" {
		t.Errorf("MGET: got %v, %v; want [42 2 <nil> 3]", vals, err)
	}
	if n, err := rdb.Exists(ctx, "a", "nope").Result(); err != nil || n != 1 {
		t.Errorf("EXISTS: got %d, %v; want 1", n, err)
	}
	if n, err := rdb.Del(ctx, "c").Result(); err != nil || n != 1 {
		t.Errorf("DEL: got %d, %v; want 1", n, err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 2 {
		t.Errorf("DBSIZE: got %d, %v; want 2", n, err)
	}
	if info, err := rdb.Info(ctx, "store").Result(); err != nil || !strings.Contains(info, "Log.TailAddress:") {
		t.Errorf("INFO store: got %q, %v", info, err)
	}

	// 1000 SETs then 1000 GETs in one pipeline each.
	pipe := rdb.Pipeline()
	for i := 0; i < 1000; i++ {
		pipe.Set(ctx, fmt.Sprintf("p%d", i), fmt.Sprintf("v%d", i), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipelined SETs: %v", err)
	}
	gets := make([]*redis.StringCmd, 1000)
	for i := range gets {
		gets[i] = pipe.Get(ctx, fmt.Sprintf("p%d", i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipelined GETs: %v", err)
	}
	for i, g := range gets {
		if g.Val() != fmt.Sprintf("v%d", i) {
			t.Fatalf("pipelined GET p%d: got %q, want v%d", i, g.Val(), i)
		}
	}

	wrong := redis.NewClient(&redis.Options{Addr: s.Addr().String(), Password: "nope", MaxRetries: -1})
	defer wrong.Close()
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("PING with a wrong password: got %v, want WRONGPASS", err)
	}
}

// startBinary starts bin with args, its stderr kept, and stops it when the
// test ends.
func startBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() { testenv.StopProcess(cmd) })
	return cmd, stderr
}

// lockedBuffer is a process's stderr that a test may read while the
// process still writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestBinary starts the built binary as a process: it logs its
// configuration, answers PING, and stops cleanly on SIGTERM.
func TestBinary(t *testing.T) {
	bin := testenv.MustBinary(t)
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			port := testenv.FreePort(t)
			args := []string{"server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--index", "1m"}
			if tiered {
				args = append(args, "--storage-tier", "--memory", "128k", "--page", "16k", "--segment", "1m",
					"--logdir", testenv.MustDiskDir(t), "--device-io-backend", "uring")
			}
			cmd, stderr := startBinary(t, bin, args...)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			testenv.MustWaitPing(t, addr, 20*time.Second)

			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			ctx := context.Background()
			for i := 0; i < 2000; i++ {
				if err := rdb.Set(ctx, tieredKey(i), tieredValue(i), 0).Err(); err != nil {
					t.Fatalf("SET: %v", err)
				}
			}
			if got, err := rdb.Get(ctx, tieredKey(0)).Result(); err != nil || got != tieredValue(0) {
				t.Errorf("GET %s: got %q, %v", tieredKey(0), got, err)
			}

			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("server exit after SIGTERM: %v\n%s", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("server still running 20 s after SIGTERM\n%s", stderr.String())
			}
			log := stderr.String()
			want := []string{"tierbench server ready", "addr=127.0.0.1:" + strconv.Itoa(port), "storage_tier=" + strconv.FormatBool(tiered),
				"sector_size=", "backend=", "tierbench server stopped"}
			if tiered {
				want = append(want, "backend=uring", "memory=128k", "device_type=native")
			}
			for _, w := range want {
				if !strings.Contains(log, w) {
					t.Errorf("server log lacks %q:\n%s", w, log)
				}
			}
			// A clean stop closes the listener on purpose: no warning.
			for _, bad := range []string{"WARN", "ERROR", "accept failed"} {
				if strings.Contains(log, bad) {
					t.Errorf("server log after SIGTERM holds %q:\n%s", bad, log)
				}
			}
		})
	}
}
