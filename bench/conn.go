package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// ErrAuth is wrapped when the server refuses the password or wants one.
var ErrAuth = errors.New("bench: authentication failed")

// handshakeTimeout bounds the AUTH and PING of a new connection.
const handshakeTimeout = 10 * time.Second

// dial connects to addr, authenticates when auth is set, and checks with a
// PING that the server will take commands.
func dial(ctx context.Context, addr, auth string) (*socket, error) {
	d := net.Dialer{Timeout: handshakeTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("bench: connect to %s: connection refused (is the server running and listening there?)", addr)
		}
		return nil, fmt.Errorf("bench: connect to %s: %w", addr, err)
	}
	if err := handshake(conn, addr, auth); err != nil {
		conn.Close()
		return nil, err
	}
	s, err := newSocket(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func handshake(conn net.Conn, addr, auth string) error {
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	defer conn.SetDeadline(time.Time{})
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
	if auth != "" {
		cmd := appendArrayHeader(nil, 2)
		cmd = appendBulkString(cmd, "AUTH")
		cmd = appendBulkString(cmd, auth)
		line, err := ask(cmd)
		if err != nil {
			return fmt.Errorf("bench: authenticate to %s: %w", addr, closedErr(err))
		}
		if strings.HasPrefix(line, "-") {
			return fmt.Errorf("%w: %s refused AUTH: server replied %q", ErrAuth, addr, line[1:])
		}
	}
	line, err := ask(appendBulkString(appendArrayHeader(nil, 1), "PING"))
	if err != nil {
		return fmt.Errorf("bench: PING %s: %w", addr, closedErr(err))
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
func dialAll(ctx context.Context, addr, auth string, n int) ([]*socket, error) {
	conns := make([]*socket, 0, n)
	for range n {
		c, err := dial(ctx, addr, auth)
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
