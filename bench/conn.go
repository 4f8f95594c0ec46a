package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrAuth is wrapped when the server refuses the password or wants one.
var ErrAuth = errors.New("bench: authentication failed")

// handshakeTimeout bounds the AUTH and PING of a new connection.
const handshakeTimeout = 10 * time.Second

// dialSpec is how every connection of a run is opened: AUTH's user and
// password, and TLS.
type dialSpec struct {
	user, auth string
	tls        *tls.Config // nil: plain TCP; its ServerName is set per host
	tlsOpts    *TLSOptions
	agreed     *agreedTLS // what the first TLS connection agreed, for the report
}

// agreedTLS keeps the first TLS connection's parameters.
type agreedTLS struct {
	once sync.Once
	info *TLSInfo
}

func (a *agreedTLS) note(cs tls.ConnectionState, cfg *tls.Config) {
	a.once.Do(func() {
		a.info = &TLSInfo{Version: tls.VersionName(cs.Version), CipherSuite: tls.CipherSuiteName(cs.CipherSuite),
			ServerName: cfg.ServerName, Verified: !cfg.InsecureSkipVerify}
	})
}

// serverName is the name a TLS connection to addr sends and checks: --sni,
// or addr's host.
func (d dialSpec) serverName(addr string) string {
	if d.tlsOpts.SNI != "" {
		return d.tlsOpts.SNI
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

// refusedError is a connection refused, worded for people, that still
// unwraps to the dialer's *net.OpError (the orchestrator tells "nothing
// listening" from other failures by it).
type refusedError struct {
	addr string
	err  error
}

func (e *refusedError) Error() string {
	return "bench: connect to " + e.addr + ": connection refused (is the server running and listening there?)"
}

func (e *refusedError) Unwrap() error { return e.err }

// dial connects to addr, speaks TLS when the spec says so, authenticates
// when it has a password, and checks with a PING that the server will take
// commands.
func dial(ctx context.Context, addr string, spec dialSpec) (*socket, error) {
	d := net.Dialer{Timeout: handshakeTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &refusedError{addr: addr, err: err}
		}
		return nil, fmt.Errorf("bench: connect to %s: %w", addr, err)
	}
	s, err := newSocket(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if spec.tls != nil {
		cfg := spec.tls.Clone()
		cfg.ServerName = spec.serverName(addr)
		s.pipe = &tlsPipe{s: s, in: make([]byte, tlsInBytes)}
		cfg.KeyLogWriter = &s.pipe.keys
		s.tls = tls.Client(s.pipe, cfg)
		if err := s.tls.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, tlsHandshakeError(addr, cfg.ServerName, spec.tlsOpts, err)
		}
		s.pipe.appStart = s.pipe.records
		if spec.agreed != nil {
			spec.agreed.note(s.tls.ConnectionState(), cfg)
		}
	}
	if err := handshake(s, addr, spec); err != nil {
		conn.Close()
		if s.tls != nil && strings.Contains(err.Error(), "remote error: tls:") {
			// TLS 1.3 reports a refused client certificate at the first read.
			return nil, tlsHandshakeError(addr, spec.serverName(addr), spec.tlsOpts, err)
		}
		if s.tls != nil && errors.Is(err, errServerClosed) {
			// Or the alert is lost to the reset our request provoked.
			o := spec.tlsOpts
			if o.CertFile == "" && o.CertPEM == nil {
				return nil, fmt.Errorf("bench: %s closed the connection right after the TLS handshake, as a server that requires a client certificate does: give --cert and --key", addr)
			}
			return nil, fmt.Errorf("bench: %s closed the connection right after the TLS handshake, as a server that refused the client certificate --cert %s does", addr, o.CertFile)
		}
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	return s, nil
}

// handshake sends AUTH (with the user, if one) and PING on a new
// connection and reads their replies.
func handshake(conn io.ReadWriter, addr string, spec dialSpec) error {
	br := bufio.NewReader(conn)
	ask := func(cmd []byte) (string, error) {
		if _, err := conn.Write(cmd); err != nil {
			return "", err
		}
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	if spec.auth != "" {
		cmd, as := authCommand(spec.user, spec.auth), ""
		if spec.user != "" {
			as = fmt.Sprintf(" as user %q", spec.user)
		}
		line, err := ask(cmd)
		if err != nil {
			return fmt.Errorf("bench: authenticate to %s%s: %w%s", addr, as, closedErr(err), tlsHint(spec, err))
		}
		if strings.HasPrefix(line, "-") {
			return fmt.Errorf("%w: %s refused AUTH%s: server replied %q", ErrAuth, addr, as, line[1:])
		}
	}
	line, err := ask(appendBulkString(appendArrayHeader(nil, 1), "PING"))
	if err != nil {
		return fmt.Errorf("bench: PING %s: %w%s", addr, closedErr(err), tlsHint(spec, err))
	}
	switch {
	case strings.HasPrefix(line, "-NOAUTH"):
		return fmt.Errorf("%w: %s requires a password (give --auth): server replied %q", ErrAuth, addr, line[1:])
	case strings.HasPrefix(line, "-"):
		return fmt.Errorf("bench: PING %s: server replied %q", addr, line[1:])
	case line != "+PONG":
		return fmt.Errorf("bench: PING %s: expected +PONG, server replied %q", addr, line)
	}
	return nil
}

// tlsHint is what to add to a plain connection's early close: a TLS port
// closes a connection that does not start with a TLS handshake.
func tlsHint(spec dialSpec, err error) string {
	if spec.tls == nil && isClosed(err) {
		return " (if that is the server's tls-port, give --tls)"
	}
	return ""
}

// authCommand is AUTH password, or AUTH user password.
func authCommand(user, auth string) []byte {
	if user == "" {
		return appendBulkString(appendBulkString(appendArrayHeader(nil, 2), "AUTH"), auth)
	}
	cmd := appendBulkString(appendArrayHeader(nil, 3), "AUTH")
	return appendBulkString(appendBulkString(cmd, user), auth)
}

// closedErr names an EOF or reset as the server closing the connection.
func closedErr(err error) error {
	if isClosed(err) {
		return errServerClosed
	}
	return err
}

func isClosed(err error) bool {
	return errors.Is(err, errServerClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "EOF")
}

// dialAll opens n connections, closing those already open if one fails.
func dialAll(ctx context.Context, addr string, spec dialSpec, n int) ([]*socket, error) {
	conns := make([]*socket, 0, n)
	for range n {
		c, err := dial(ctx, addr, spec)
		if err != nil {
			closeAll(conns)
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeAll(conns []*socket) {
	for _, c := range conns {
		c.conn.Close()
	}
}

// cutAll makes every blocked read or write on conns return at once.
func cutAll(conns []*socket) {
	for _, c := range conns {
		c.conn.SetDeadline(time.Now())
	}
}
