package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tierbench/tierbench/internal/pki"
	"github.com/tierbench/tierbench/internal/testenv"
)

// tlsFixture is a CA made for the test (or a redis-server's, from
// testenv.MustTLSRedisServer), a server certificate of it for localhost
// and 127.0.0.1 written where tls-cert-file and friends read it, and a
// client certificate.
type tlsFixture struct {
	ca                        *pki.CA
	caFile, certFile, keyFile string
	client                    tls.Certificate
}

func newTLSFixture(t testing.TB) *tlsFixture {
	t.Helper()
	ca, err := pki.NewCA("tierbench test CA")
	if err != nil {
		t.Fatal(err)
	}
	return tlsFixtureOf(t, ca)
}

// tlsFixtureOf is a fixture whose certificates ca signs.
func tlsFixtureOf(t testing.TB, ca *pki.CA) *tlsFixture {
	t.Helper()
	dir := t.TempDir()
	srv, err := ca.Issue(testenv.TLSServerCert)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ca.Issue(pki.Cert{Name: "client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsFixture{ca: ca, caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "server.crt"), keyFile: filepath.Join(dir, "server.key")}
	if err := ca.WritePEM(f.caFile); err != nil {
		t.Fatal(err)
	}
	if err := srv.WritePEM(f.certFile, f.keyFile); err != nil {
		t.Fatal(err)
	}
	if f.client, err = cli.TLSCertificate(); err != nil {
		t.Fatal(err)
	}
	return f
}

// server is the TLS configuration of a tierbench server with the
// fixture's files.
func (f *tlsFixture) server(authClients string) *TLSConfig {
	return &TLSConfig{CertFile: f.certFile, KeyFile: f.keyFile, CAFile: f.caFile, AuthClients: authClients}
}

// clientConfig trusts the fixture's CA and presents cert (none when nil).
func (f *tlsFixture) clientConfig(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: f.ca.Pool(), ServerName: "localhost"}
	if cert != nil {
		// Always send it, as OpenSSL's clients do: Go's client otherwise
		// sends none when the server names CAs that did not sign it.
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// dialer opens TLS connections to addr with the fixture's client
// certificate.
func (f *tlsFixture) dialer(addr string) func() (net.Conn, error) {
	return func() (net.Conn, error) {
		d := &net.Dialer{Timeout: 5 * time.Second}
		return tls.DialWithDialer(d, "tcp", addr, f.clientConfig(&f.client))
	}
}

// startRedisTLS starts a real redis-server with a TLS port beside its
// plain one, client certificates as authClients says and extra
// arguments, and returns its TLS address and a fixture of its CA.
func startRedisTLS(t *testing.T, authClients string, extra ...string) (string, *tlsFixture) {
	t.Helper()
	r := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, append([]string{"--tls-auth-clients", authClients}, extra...)...)
	return r.TLSAddr, tlsFixtureOf(t, r.CA)
}

// TestCompatOverTLS runs the compatibility scripts over TLS against a
// real redis-server --tls-port and a tierbench server with TLS alone (no
// plain port), both requiring client certificates, and diffs the replies.
func TestCompatOverTLS(t *testing.T) {
	scripts := loadCompatScripts(t)
	allow := loadAllowList(t)
	redisAddr, f := startRedisTLS(t, "yes")
	s := startServer(t, Config{ScatterGatherGet: true, NoPlain: true, TLS: f.server("")})
	if s.ln != nil || s.TLSAddr() == nil || s.Addr().String() != s.TLSAddr().String() {
		t.Fatalf("listeners: got plain %v and TLS %v, want TLS alone", s.ln, s.TLSAddr())
	}
	redis := compatTarget{name: "redis-tls", dial: f.dialer(redisAddr)}
	tb := compatTarget{name: "tierbench-tls", dial: f.dialer(s.TLSAddr().String())}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range scripts {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		lines := scripts[name]
		want := runCompatScript(t, redis, lines)
		got := runCompatScript(t, tb, lines)
		for i, l := range lines {
			if got[i] == want[i] {
				continue
			}
			if why, ok := allow[l.text]; ok {
				t.Logf("%s: allowed difference (%s)", l, why)
				continue
			}
			t.Errorf("%s:\n  got  %q\n  want %q (redis-server over TLS)", l, got[i], want[i])
		}
	}
}

// aclScript logs in and out as the users of aclArgs; every reply is held
// to redis-server's.
var aclScript = []string{
	"GET k",
	"ACL WHOAMI",
	"HELLO 2",
	"AUTH wrong",
	"AUTH alice wrong",
	"AUTH bob pw",
	"AUTH nobody pw",
	"AUTH Alice secret",
	"HELLO 2 AUTH alice wrong",
	"HELLO 3 AUTH alice wrong",
	"GET k",
	"AUTH alice secret",
	"ACL WHOAMI",
	"SET k v",
	"GET k",
	"ACL USERS",
	"ACL USERS x",
	"ACL WHOAMI x",
	"ACL NOPE",
	"AUTH carol anything",
	"ACL WHOAMI",
	"AUTH alice wrong",
	"ACL WHOAMI",
	"AUTH dflt-pw",
	"ACL WHOAMI",
	"AUTH default dflt-pw",
	"ACL WHOAMI",
	"AUTH dave second",
	"ACL WHOAMI",
	"AUTH dave first",
	"ACL WHOAMI",
	"@h !shape HELLO 2 AUTH alice secret",
	"@h ACL WHOAMI",
	"@h GET k",
	"@n GET k",
	"@n AUTH carol x",
	"@n GET k",
}

// aclArgs are the users, in Redis's flags: a password for the default
// user, alice with a password, bob disabled, carol without one, dave with
// two (one given by its SHA-256).
func aclArgs() []string {
	return []string{"--requirepass", "dflt-pw",
		"--user", "alice on >secret ~* &* +@all",
		"--user", "bob off >pw ~* +@all",
		"--user", "carol on nopass allkeys allcommands",
		"--user", "dave on >first #" + sha256Hex("second") + " ~* +@all"}
}

// TestUsersMatchRedis logs in as ACL users over TLS on a real
// redis-server and on tierbench, both started with the same users, and
// holds tierbench to every reply; the error words are checked as well.
func TestUsersMatchRedis(t *testing.T) {
	// redis-server takes a user's rules as words of their own after --user.
	var redisArgs, users []string
	for i, a := range aclArgs() {
		if i > 0 && aclArgs()[i-1] == "--user" {
			users = append(users, a)
			redisArgs = append(redisArgs, strings.Fields(a)...)
		} else {
			redisArgs = append(redisArgs, a)
		}
	}
	redisAddr, f := startRedisTLS(t, "yes", redisArgs...)
	s := startServer(t, Config{TLS: f.server("yes"), Auth: "dflt-pw", Users: users})
	var lines []compatLine
	for i, text := range aclScript {
		l, err := parseCompatLine(text)
		if err != nil {
			t.Fatal(err)
		}
		l.file, l.num = "aclScript", i+1
		lines = append(lines, l)
	}
	auth := []string{"AUTH", "dflt-pw"}
	want := runCompatScript(t, compatTarget{name: "redis-tls", dial: f.dialer(redisAddr), auth: auth}, lines)
	got := runCompatScript(t, compatTarget{name: "tierbench-tls", dial: f.dialer(s.TLSAddr().String()), auth: auth}, lines)
	for i, l := range lines {
		if l.args[0] == "HELLO" && l.args[1] == "3" {
			// tierbench speaks RESP2 alone: HELLO 3 is refused before AUTH.
			if !strings.HasPrefix(got[i], "-NOPROTO") {
				t.Errorf("%s: got %q, want -NOPROTO", l, got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("%s:\n  got  %q\n  want %q (redis-server)", l, got[i], want[i])
		}
	}
	for i, w := range map[int]string{
		0:  "-NOAUTH Authentication required.\r\n",
		3:  "-" + wrongPass + "\r\n",
		5:  "-" + wrongPass + "\r\n",
		12: bulk("alice"),
		15: array(bulk("alice"), bulk("bob"), bulk("carol"), bulk("dave"), bulk("default")),
		28: bulk("dave"),
	} {
		if got[i] != w {
			t.Errorf("%s: got %q, want %q", lines[i], got[i], w)
		}
	}
	// CLIENT LIST names the user.
	c := mustTLSDial(t, s.TLSAddr().String(), f.clientConfig(&f.client))
	c.do("AUTH", "alice", "secret")
	if info := c.do("CLIENT", "INFO"); !strings.Contains(info, " user=alice ") {
		t.Errorf("CLIENT INFO after AUTH alice: got %q, want user=alice", info)
	}
}

func mustTLSDial(t *testing.T, addr string, cfg *tls.Config) *client {
	t.Helper()
	nc, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("dial %s over TLS: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// TestTLSAuthClients holds tls-auth-clients to Redis's meaning on both
// servers: yes refuses a client without a certificate, optional takes one
// without but refuses one from another CA, no takes any.
func TestTLSAuthClients(t *testing.T) {
	other, err := pki.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := other.Issue(pki.Cert{Name: "stranger", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := kp.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"yes", "optional", "no"} {
		redisAddr, f := startRedisTLS(t, mode)
		addrs := map[string]string{
			"redis":     redisAddr,
			"tierbench": startServer(t, Config{NoPlain: true, TLS: f.server(mode)}).TLSAddr().String(),
		}
		for _, tc := range []struct {
			cert    *tls.Certificate
			certFor string
			ok      bool
		}{
			{nil, "no certificate", mode != "yes"},
			{&f.client, "a certificate from the CA", true},
			{&stranger, "a certificate from another CA", mode == "no"},
		} {
			for _, server := range []string{"redis", "tierbench"} {
				reply, err := pingTLS(addrs[server], f.clientConfig(tc.cert))
				if ok := err == nil && reply == "+PONG\r\n"; ok != tc.ok {
					t.Errorf("%s, tls-auth-clients %s, %s: got %q, %v; want served %v", server, mode, tc.certFor, reply, err, tc.ok)
				}
			}
		}
	}
}

// pingTLS sends PING over a new TLS connection and returns the reply.
func pingTLS(addr string, cfg *tls.Config) (string, error) {
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	b, err := readReply(bufio.NewReader(nc))
	return string(b), err
}

// TestPlainAndTLSTogether serves one store on both listeners.
func TestPlainAndTLSTogether(t *testing.T) {
	f := newTLSFixture(t)
	s := startServer(t, Config{TLS: f.server("no")})
	plain := dial(t, s)
	secure := mustTLSDial(t, s.TLSAddr().String(), f.clientConfig(nil))
	if got := plain.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET over TCP: got %q", got)
	}
	if got := secure.do("GET", "k"); got != bulk("v") {
		t.Errorf("GET over TLS: got %q, want %q", got, bulk("v"))
	}
	want := array(bulk("port"), bulk(strconv.Itoa(s.port())), bulk("tls-auth-clients"), bulk("no"),
		bulk("tls-port"), bulk(strconv.Itoa(s.TLSAddr().(*net.TCPAddr).Port)))
	if got := secure.do("CONFIG", "GET", "port", "tls-port", "tls-auth-clients"); got != want {
		t.Errorf("CONFIG GET port tls-port tls-auth-clients: got %q, want %q", got, want)
	}
}

// TestGetBatchAllocs: a pipelined batch of GETs over TCP allocates
// nothing, on the server or in the test's client, once buffers are grown.
// Over TLS the one allocation per record read that crypto/tls makes
// itself (readFromUntil's atLeastReader, on each side: the server's one
// read of the batch and the client's of the replies) is all there is.
func TestGetBatchAllocs(t *testing.T) {
	f := newTLSFixture(t)
	s := startServer(t, Config{TLS: f.server("yes")})
	for _, tc := range []struct {
		name    string
		c       *client
		maxRead int // the client's reads per batch (the replies' records)
		want    float64
	}{
		{"tcp", dial(t, s), 1 << 20, 0},
		{"tls", mustTLSDial(t, s.TLSAddr().String(), f.clientConfig(&f.client)), 1 << 20, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "tls" && raceEnabled {
				t.Skip("under -race sync.Pool drops crypto/tls's record buffers at random; scripts/test.sh counts them in its run without -race")
			}
			const n = 64
			value := strings.Repeat("x", 96)
			var batch []byte
			for i := range n {
				key := fmt.Sprintf("key:%012d", i)
				tc.c.do("SET", key, value)
				batch = append(batch, encodeArgs("GET", key)...)
			}
			want := strings.Repeat(bulk(value), n)
			buf := make([]byte, len(want))
			reads := 0
			run := func() {
				if _, err := tc.c.nc.Write(batch); err != nil {
					t.Fatal(err)
				}
				for got := 0; got < len(buf); reads++ {
					m, err := tc.c.nc.Read(buf[got:])
					if err != nil {
						t.Fatal(err)
					}
					got += m
				}
			}
			run()
			if string(buf) != want {
				t.Fatalf("replies: got %q, want %d x %q", buf, n, bulk(value))
			}
			reads = 0
			allocs := testing.AllocsPerRun(50, run)
			// A batch whose replies took the client more than one read
			// (TCP cut them) costs crypto/tls one allocation more per read.
			extra := 0.0
			if tc.name == "tls" {
				extra = float64(reads)/51 - 1
			}
			if allocs > tc.want+extra {
				t.Errorf("a batch of %d GETs: %v allocations (client reads per batch %.2f), want at most %v", n, allocs, float64(reads)/51, tc.want+extra)
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestGoRedisOverTLS starts the built binary with TLS alone (--port 0),
// client certificates required and an ACL user, as redis-server is
// started, and drives it with go-redis over a tls.Config as that user.
func TestGoRedisOverTLS(t *testing.T) {
	f := newTLSFixture(t)
	bin := testenv.MustBinary(t)
	port := testenv.FreePort(t)
	_, stderr := startBinary(t, bin, "server", "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1", "--index", "1m",
		"--tls-cert-file", f.certFile, "--tls-key-file", f.keyFile, "--tls-ca-cert-file", f.caFile,
		"--auth", "dflt-pw", "--user", "alice on >secret ~* &* +@all")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	opts := func(user, pass string, cfg *tls.Config) *redis.Options {
		return &redis.Options{Addr: addr, Username: user, Password: pass, TLSConfig: cfg, MaxRetries: -1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := redis.NewClient(opts("alice", "secret", f.clientConfig(&f.client)))
	defer rdb.Close()
	for err := rdb.Ping(ctx).Err(); err != nil; err = rdb.Ping(ctx).Err() {
		if ctx.Err() != nil {
			t.Fatalf("no PONG over TLS from %s: %v\n%s", addr, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Errorf("GET k: got %q, %v; want v", got, err)
	}
	if got, err := rdb.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || got != "alice" {
		t.Errorf("ACL WHOAMI: got %q, %v; want alice", got, err)
	}
	for _, tc := range []struct {
		name, user, pass string
		cfg              *tls.Config
		want             string
	}{
		{"wrong password", "alice", "nope", f.clientConfig(&f.client), wrongPass},
		{"unknown user", "mallory", "secret", f.clientConfig(&f.client), wrongPass},
		{"default user", "", "dflt-pw", f.clientConfig(&f.client), ""},
		{"no client certificate", "alice", "secret", f.clientConfig(nil), "remote error: tls: certificate required"},
	} {
		c := redis.NewClient(opts(tc.user, tc.pass, tc.cfg))
		err := c.Ping(ctx).Err()
		c.Close()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if !strings.Contains(stderr.String(), "addr=\"\" tls_addr="+addr) {
		t.Errorf("server log: want no plain listener and TLS on %s:\n%s", addr, stderr.String())
	}
}

// TestTLSMaxClients: one client more than maxclients over TLS is told
// why, as over TCP, without holding up the clients already served.
func TestTLSMaxClients(t *testing.T) {
	f := newTLSFixture(t)
	s := startServer(t, Config{NoPlain: true, TLS: f.server("no"), MaxClients: 1})
	first := mustTLSDial(t, s.TLSAddr().String(), f.clientConfig(nil))
	if got := first.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING: got %q", got)
	}
	if got, err := pingTLS(s.TLSAddr().String(), f.clientConfig(nil)); got != "-ERR max number of clients reached\r\n" {
		t.Errorf("a second client: got %q, %v; want -ERR max number of clients reached", got, err)
	}
	if got := first.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the refusal: got %q", got)
	}
}
