package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

const null = "$-1\r\n"

// memoryStore is a small in-memory store configuration for tests.
var memoryStore = store.Config{PageBytes: 64 << 10, IndexBytes: 1 << 20}

// startServer runs a server on a free loopback port until the test ends.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	cfg.Bind = "127.0.0.1"
	cfg.Port = 0
	if cfg.Store == (store.Config{}) {
		cfg.Store = memoryStore
	}
	s, err := New(cfg, nil)
	if err != nil {
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM) {
			t.Skipf("the kernel refuses the %s device: %v", cfg.Store.Backend, err)
		}
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return within 30 s of its context being cancelled")
		}
	})
	return s
}

// client is a raw RESP client that returns replies as the server wrote them.
type client struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

func dial(t testing.TB, s *Server) *client {
	t.Helper()
	return dialAddr(t, s.Addr().String())
}

func (c *client) send(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// do sends args as a RESP array and returns the raw reply.
func (c *client) do(args ...string) string {
	c.t.Helper()
	c.send(encodeArgs(args...))
	return c.reply()
}

func (c *client) reply() string {
	c.t.Helper()
	b, err := readReply(c.r)
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return string(b)
}

func encodeArgs(args ...string) []byte {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	return encodeCommand(bs...)
}

// readReply reads one complete RESP2 reply and returns its raw bytes; it
// fails on anything that is not well-formed RESP2.
func readReply(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return line, fmt.Errorf("reply line %q does not end with CRLF", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-':
		return line, nil
	case ':':
		if _, ok := parseInt(body); !ok {
			return line, fmt.Errorf("integer reply %q", line)
		}
		return line, nil
	case '$':
		n, ok := parseInt(body)
		if !ok || n < -1 {
			return line, fmt.Errorf("bulk reply header %q", line)
		}
		if n == -1 {
			return line, nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(r, data); err != nil {
			return line, err
		}
		if !bytes.HasSuffix(data, []byte("\r\n")) {
			return line, fmt.Errorf("bulk reply of %d bytes not terminated by CRLF", n)
		}
		return append(line, data...), nil
	case '*':
		n, ok := parseInt(body)
		if !ok || n < -1 {
			return line, fmt.Errorf("array reply header %q", line)
		}
		out := line
		for i := int64(0); i < n; i++ {
			el, err := readReply(r)
			out = append(out, el...)
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	return line, fmt.Errorf("reply starts with %q", line[0])
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func array(els ...string) string {
	return "*" + strconv.Itoa(len(els)) + "\r\n" + strings.Join(els, "")
}

type step struct {
	args   []string // sent as a RESP array, unless inline is set
	inline string
	want   string // the exact raw reply
	prefix string // or a prefix of it
}

func runSteps(t *testing.T, c *client, steps []step) {
	t.Helper()
	for _, st := range steps {
		var got, req string
		if st.inline != "" {
			req = fmt.Sprintf("inline %q", st.inline)
			c.send([]byte(st.inline))
			got = c.reply()
		} else {
			req = fmt.Sprintf("%q", st.args)
			got = c.do(st.args...)
		}
		switch {
		case st.prefix != "":
			if !strings.HasPrefix(got, st.prefix) {
				t.Errorf("%s: got %q, want a reply starting %q", req, got, st.prefix)
			}
		case got != st.want:
			t.Errorf("%s: got %q, want %q", req, got, st.want)
		}
	}
}

func wrongArgs(cmd string) string {
	return "-ERR wrong number of arguments for '" + cmd + "' command\r\n"
}

func expectClosed(t *testing.T, c *client) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(c.r)
	if err != nil || len(rest) != 0 {
		t.Errorf("after a protocol error: got %q, %v; want the connection closed (EOF)", rest, err)
	}
}

func infoInt(t *testing.T, info, name string) int64 {
	t.Helper()
	i := strings.Index(info, name+":")
	if i < 0 {
		t.Fatalf("INFO has no %s in %q", name, info)
	}
	rest := info[i+len(name)+1:]
	rest = rest[:strings.IndexByte(rest, '\r')]
	v, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %v", name, err)
	}
	return v
}
