package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// silentClients is how many clients connect and send nothing: many times
// --maxclients, as an attacker would open them.
const silentClients = 64

// dialSilent opens n TCP connections to addr that never send a byte.
func dialSilent(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	for range n {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("silent client %d of %d: %v", len(conns)+1, n, err)
		}
		conns = append(conns, nc)
	}
	t.Cleanup(func() {
		for _, nc := range conns {
			nc.Close()
		}
	})
	return conns
}

// closedByServer waits up to wait for the server to close each silent
// connection, and returns how many it closed and how many of those it
// first told "-ERR max number of clients reached".
func closedByServer(conns []net.Conn, wait time.Duration) (closed, refused int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(wait)
	for _, nc := range conns {
		wg.Go(func() {
			nc.SetReadDeadline(deadline)
			got, err := io.ReadAll(nc)
			if err != nil { // the deadline: still open
				return
			}
			mu.Lock()
			defer mu.Unlock()
			closed++
			if string(got) == "-ERR max number of clients reached\r\n" {
				refused++
			}
		})
	}
	wg.Wait()
	return closed, refused
}

// openFDs counts the descriptors process pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// waitFDsAtMost waits until pid has at most want descriptors open and
// returns the count last seen.
func waitFDsAtMost(t *testing.T, pid, want int, wait time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		n := openFDs(t, pid)
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// authPing sends AUTH (when pw is not "") and PING on nc and returns the
// replies.
func authPing(nc net.Conn, pw string) (string, error) {
	nc.SetDeadline(time.Now().Add(3 * time.Second))
	req, replies := "PING\r\n", 1
	if pw != "" {
		req, replies = "AUTH "+pw+"\r\n"+req, 2
	}
	if _, err := nc.Write([]byte(req)); err != nil {
		return "", err
	}
	r := bufio.NewReader(nc)
	var got string
	for range replies {
		line, err := r.ReadString('\n')
		got += line
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// TestSilentClientsCannotHoldServer: 64 clients that connect and send
// nothing, against a real server with --maxclients 4, neither keep a real
// client out for long nor stop SIGTERM from stopping the server, and the
// server closes them (no descriptor is leaked) once the TLS handshake
// deadline or the unauthenticated connection's bound passes.
func TestSilentClientsCannotHoldServer(t *testing.T) {
	f := newTLSFixture(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tls   bool
		extra []string
		// realWait: how long the real client may take to be served.
		// With TLS it must be served at once, well inside the default
		// 10 s handshake deadline; over plain TCP the four held slots
		// free when the unauthenticated bound (1 s here) passes.
		realWait time.Duration
		// serverCloses: the server must close every silent client by
		// itself (its deadlines here are 1 s); otherwise, with the
		// default deadlines, it need not within the test.
		serverCloses bool
		pw           string
	}{
		{name: "TLS, default deadlines", tls: true, realWait: 3 * time.Second},
		{name: "TLS, 1 s handshake deadline", tls: true, extra: []string{"--tls-handshake-timeout", "1"}, realWait: 3 * time.Second, serverCloses: true},
		{name: "plain, password, 1 s auth bound", extra: []string{"--requirepass-file", pwFile, "--auth-timeout", "1"}, realWait: 10 * time.Second, serverCloses: true, pw: "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, tlsPort := testenv.FreePort(t), testenv.FreePort(t)
			args := []string{"server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--index", "1m", "--page", "1m", "--maxclients", "4"}
			target := "127.0.0.1:" + strconv.Itoa(port)
			if tc.tls {
				args = append(args, "--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", f.certFile, "--tls-key-file", f.keyFile, "--tls-auth-clients", "no")
				target = "127.0.0.1:" + strconv.Itoa(tlsPort)
			}
			cmd := exec.Command(testenv.MustBinary(t), append(args, tc.extra...)...)
			stderr := new(lockedBuffer)
			cmd.Stderr = stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill() // no-op once it exited
				<-exited
				if t.Failed() {
					t.Logf("server stderr:\n%s", stderr.String())
				}
			})
			testenv.MustWaitPing(t, "127.0.0.1:"+strconv.Itoa(port), 20*time.Second)
			pid := cmd.Process.Pid
			// The descriptors of the server at rest: the PING's
			// connection is closed once it is under this.
			time.Sleep(100 * time.Millisecond)
			atRest := openFDs(t, pid)

			silent := dialSilent(t, target, silentClients)

			// A real client is served: at once over TLS, over plain TCP
			// once a held slot is freed.
			var got string
			var err error
			deadline := time.Now().Add(tc.realWait)
			for {
				var nc net.Conn
				if tc.tls {
					nc, err = tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second, Deadline: time.Now().Add(3 * time.Second)}, "tcp", target, f.clientConfig(nil))
				} else {
					nc, err = net.DialTimeout("tcp", target, 3*time.Second)
				}
				if err == nil {
					got, err = authPing(nc, tc.pw)
					nc.Close()
				}
				if strings.HasSuffix(got, "+PONG\r\n") || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !strings.HasSuffix(got, "+PONG\r\n") {
				t.Errorf("a real client with %d silent ones connected: got %q, %v within %v; want +PONG", silentClients, got, err, tc.realWait)
			}

			if tc.serverCloses {
				closed, refused := closedByServer(silent, 10*time.Second)
				if closed != silentClients {
					t.Errorf("the server closed %d of the %d silent clients within 10 s, want all", closed, silentClients)
				}
				if !tc.tls && refused < silentClients-4 {
					t.Errorf("%d silent clients were told the max-clients error, want at least %d", refused, silentClients-4)
				}
				if n := waitFDsAtMost(t, pid, atRest, 10*time.Second); n > atRest {
					t.Errorf("the server has %d descriptors open after closing the silent clients, want at most %d as at rest", n, atRest)
				}
			}

			// SIGTERM stops it with the silent clients still connected.
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-exited:
				exited <- err
				if err != nil {
					t.Errorf("the server exited with %v after SIGTERM, want status 0", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("the server did not exit within 10 s of SIGTERM with %d silent clients connected", silentClients)
			}
		})
	}
}

// TestStopWithSilentClients: Serve returns promptly when stopped while
// silent clients hold every slot and every pending TLS handshake, and
// leaves no goroutine behind.
func TestStopWithSilentClients(t *testing.T) {
	f := newTLSFixture(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		tls  bool
	}{
		{"TLS", Config{TLS: f.server("no"), MaxClients: 4}, true},
		{"plain, password", Config{Auth: "pw", MaxClients: 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			cfg := tc.cfg
			cfg.Bind, cfg.Store = "127.0.0.1", memoryStore
			s, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Serve(ctx) }()
			addr := s.Addr().String()
			if tc.tls {
				addr = s.TLSAddr().String()
			}
			silent := dialSilent(t, addr, 16)
			// Let the server accept them all before it is stopped.
			time.Sleep(200 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, ErrClosed) {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Serve did not return within 10 s of being stopped with %d silent clients connected", len(silent))
			}
			for _, nc := range silent {
				nc.Close()
			}
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after the server stopped, want at most %d as before it started:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// TestUnauthenticatedBound: with a password, a connection that has not
// authenticated within AuthTimeout is closed however it behaves, while one
// that authenticated stays; INFO counts the closes.
func TestUnauthenticatedBound(t *testing.T) {
	const bound = 500 * time.Millisecond
	s := startServer(t, Config{Auth: "pw", AuthTimeout: bound})
	admin := dial(t, s)
	if got := admin.do("AUTH", "pw"); got != "+OK\r\n" {
		t.Fatalf("AUTH: got %q", got)
	}
	pings := func(n int) []byte { return []byte(strings.Repeat("PING\r\n", n)) }
	for _, tc := range []struct {
		name string
		// act runs on the connection until it returns or the
		// connection is closed.
		act        func(nc net.Conn) error
		wantClosed bool
	}{
		{"silent", func(net.Conn) error { return nil }, true},
		{"a PING every 50 ms", func(nc net.Conn) error {
			for {
				if _, err := nc.Write(pings(1)); err != nil {
					return err
				}
				time.Sleep(50 * time.Millisecond)
			}
		}, true},
		{"never reads its replies", func(nc net.Conn) error {
			for {
				if _, err := nc.Write(pings(64 << 10)); err != nil {
					return err
				}
			}
		}, true},
		{"wrong password", func(nc net.Conn) error {
			_, err := nc.Write([]byte("AUTH nope\r\n"))
			return err
		}, true},
		{"authenticated", func(nc net.Conn) error {
			_, err := nc.Write([]byte("AUTH pw\r\n"))
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := infoInt(t, admin.do("INFO", "stats"), "unauthenticated_timeout_disconnections")
			nc, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			go tc.act(nc)
			// Wait well past the bound, then see whether the server
			// closed the connection: a closed one reads EOF (or a
			// reset) once its replies are drained.
			time.Sleep(3 * bound)
			wait := 10 * time.Second
			if !tc.wantClosed {
				wait = 4 * bound
			}
			nc.SetReadDeadline(time.Now().Add(wait))
			_, err = io.Copy(io.Discard, nc)
			closed := err == nil || !isTimeout(err)
			if closed != tc.wantClosed {
				t.Errorf("closed by the server: got %v (%v), want %v", closed, err, tc.wantClosed)
			}
			wantCount := before
			if tc.wantClosed {
				wantCount++
			}
			if got := infoInt(t, admin.do("INFO", "stats"), "unauthenticated_timeout_disconnections"); got != wantCount {
				t.Errorf("unauthenticated_timeout_disconnections: got %d, want %d", got, wantCount)
			}
		})
	}
}
