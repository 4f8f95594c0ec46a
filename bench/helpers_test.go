package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
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

// mustLoad sets cfg to load mode (Runtime 0) and loads its key space,
// failing the test with bench's output if the load fails.
func mustLoad(t *testing.T, cfg *Config) {
	t.Helper()
	cfg.Runtime = 0
	if _, human, err := runJSON(t, context.Background(), *cfg); err != nil {
		t.Fatalf("load: %v\n%s", err, human)
	}
}

// runJSON runs cfg and decodes its JSON document.
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

// killAfterCommands kills r once it has processed n commands, or after
// 30 s: a server dying in the middle of a run.
func killAfterCommands(r *testenv.Redis, n int64) {
	deadline := time.Now().Add(30 * time.Second)
	for commandsProcessed(r.Addr) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	r.Cmd.Process.Signal(syscall.SIGKILL)
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
