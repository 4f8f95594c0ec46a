package rig

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// respConn is the few RESP commands the orchestrator itself sends: PING,
// DBSIZE and INFO. The measuring is done by `tierbench bench`.
type respConn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
}

// DialRESP connects to addr, over TLS with conf (nil: plain TCP; a
// ServerName left empty is the address's host).
func DialRESP(ctx context.Context, addr string, conf *tls.Config) (*respConn, error) {
	var c net.Conn
	var err error
	if conf == nil {
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp", addr)
	} else {
		d := tls.Dialer{Config: conf}
		c, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("orchestrator: connect to the server at %s%s: %w", addr, tlsSuffix(conf), err)
	}
	return &respConn{addr: addr, c: c, r: bufio.NewReader(c)}, nil
}

func (r *respConn) Close() error { return r.c.Close() }

// Do sends one command and returns its reply: a string for simple and
// bulk strings, an int64 for integers; a RESP error becomes a Go error.
func (r *respConn) Do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	r.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(r.c, b.String()); err != nil {
		return nil, fmt.Errorf("orchestrator: send %s to %s: %w", args[0], r.addr, err)
	}
	v, err := ReadReply(r.r)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: %s on %s: %w", args[0], r.addr, err)
	}
	return v, nil
}

// tlsSuffix names TLS in a connection's error.
func tlsSuffix(conf *tls.Config) string {
	if conf == nil {
		return ""
	}
	return " over TLS"
}

// errRESP is an error reply from the server.
type errRESP string

func (e errRESP) Error() string { return "server replied " + string(e) }

// maxBulkBytes bounds a bulk reply the orchestrator accepts (INFO is small).
const maxBulkBytes = 64 << 20

func ReadReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("malformed reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errRESP(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed integer reply %q", body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulkBytes {
			return nil, fmt.Errorf("malformed bulk length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > 1<<20 {
			return nil, fmt.Errorf("malformed array length %q", body)
		}
		out := make([]any, 0, max(n, 0))
		for range n {
			v, err := ReadReply(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", line[0])
}

// dbsize returns the server's own key count.
func (r *respConn) dbsize() (int64, error) {
	v, err := r.Do("DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("orchestrator: DBSIZE on %s: want an integer reply, got %T", r.addr, v)
	}
	return n, nil
}

// info returns the Name:Value lines of INFO <section>.
func (r *respConn) info(section string) (map[string]string, error) {
	v, err := r.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("orchestrator: INFO %s on %s: want a bulk string reply, got %T", section, r.addr, v)
	}
	return ParseInfo(s), nil
}

// ParseInfo reads INFO's `Name:Value` lines; comments and blank lines are
// skipped, and the value keeps everything after the first colon.
func ParseInfo(s string) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// LogAddresses are the hybrid log's addresses from INFO store.
type LogAddresses struct {
	Begin, Head, Tail uint64
}

// ErrNotTiered says the server's INFO has no hybrid log addresses: it is
// not a tiered server (Redis), so the head ≈ tail check does not apply.
var ErrNotTiered = errors.New("orchestrator: server reports no Log.HeadAddress / Log.TailAddress")

func ParseLogAddresses(info map[string]string) (LogAddresses, error) {
	head, okH := info["Log.HeadAddress"]
	tail, okT := info["Log.TailAddress"]
	if !okH || !okT {
		return LogAddresses{}, ErrNotTiered
	}
	var a LogAddresses
	var err error
	if a.Head, err = strconv.ParseUint(head, 10, 64); err != nil {
		return a, fmt.Errorf("orchestrator: Log.HeadAddress %q is not a number", head)
	}
	if a.Tail, err = strconv.ParseUint(tail, 10, 64); err != nil {
		return a, fmt.Errorf("orchestrator: Log.TailAddress %q is not a number", tail)
	}
	if b, ok := info["Log.BeginAddress"]; ok {
		if a.Begin, err = strconv.ParseUint(b, 10, 64); err != nil {
			return a, fmt.Errorf("orchestrator: Log.BeginAddress %q is not a number", b)
		}
	}
	if a.Head > a.Tail || a.Begin > a.Head {
		return a, fmt.Errorf("orchestrator: log addresses out of order: begin %d, head %d, tail %d", a.Begin, a.Head, a.Tail)
	}
	return a, nil
}

// DeviceShare is the share of the log below HeadAddress, on the device.
func (a LogAddresses) DeviceShare() float64 {
	if a.Tail <= a.Begin {
		return 0
	}
	return float64(a.Head-a.Begin) / float64(a.Tail-a.Begin)
}
