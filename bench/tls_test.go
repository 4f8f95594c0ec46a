package bench

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/pki"
	"github.com/tierbench/tierbench/internal/testenv"
)

// aclUser is the ACL user the TLS tests' redis-server has, beside its
// password-less default user.
var aclUser = []string{"--user", "alice", "on", ">pw", "~*", "+@all"}

// tlsConfigFor is configFor over TLS to r as user alice.
func tlsConfigFor(t *testing.T, r *testenv.TLSRedis) Config {
	cfg := configFor(t, r.TLSAddr)
	cfg.TLS = &TLSOptions{CACertFile: r.CAFile}
	cfg.User, cfg.Auth = "alice", "pw"
	return cfg
}

// TestTLSEveryPath drives a real redis-server over TLS, as an ACL user, on
// every path: the load, offline batch and window (one and several
// connections per event loop), a mix, and online; every value verified.
// Over TLS 1.3 with AES-GCM the event loops decrypt the replies with their
// own record reader; over TLS 1.2 and ChaCha20-Poly1305 tls.Conn does.
func TestTLSEveryPath(t *testing.T) {
	servers := []struct {
		name string
		args []string
	}{
		{"TLS 1.3 AES-128-GCM", []string{"--tls-protocols", "TLSv1.3", "--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"}},
		{"TLS 1.3 AES-256-GCM", []string{"--tls-protocols", "TLSv1.3", "--tls-ciphersuites", "TLS_AES_256_GCM_SHA384"}},
		{"TLS 1.3 ChaCha20", []string{"--tls-protocols", "TLSv1.3", "--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}},
		{"TLS 1.2", []string{"--tls-protocols", "TLSv1.2"}},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			testTLSEveryPath(t, testenv.MustTLSRedisServer(t, testenv.TLSServerCert, append(srv.args, aclUser...)...))
		})
	}
}

func testTLSEveryPath(t *testing.T, r *testenv.TLSRedis) {
	load := tlsConfigFor(t, r)
	load.Runtime = 0
	load.ValueLength = 100
	rep, human, err := runJSON(t, context.Background(), load)
	if err != nil {
		t.Fatalf("load over TLS: %v\n%s", err, human)
	}
	if rep.Load.Acknowledged != load.DBSize {
		t.Fatalf("load acknowledged %d keys, want %d", rep.Load.Acknowledged, load.DBSize)
	}
	if got := redisInt(t, r.Addr, "DBSIZE"); got != load.DBSize {
		t.Fatalf("DBSIZE %d after the TLS load, want %d", got, load.DBSize)
	}
	if rep.TLS == nil || !strings.HasPrefix(rep.TLS.Version, "TLS 1.") || rep.TLS.ServerName != "127.0.0.1" || !rep.TLS.Verified {
		t.Errorf("got TLS %+v in the report, want the version, a verified server name 127.0.0.1", rep.TLS)
	}
	if !strings.Contains(human, "[TLS]: TLS 1.") {
		t.Errorf("got %q, want a [TLS] line", human)
	}
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"batch", func(c *Config) {}},
		{"batch, 3 connections on 1 loop", func(c *Config) { c.Threads, c.Loops = []int{3}, 1 }},
		{"window", func(c *Config) { c.Pipeline = PipelineWindow }},
		{"window, big batch", func(c *Config) { c.Pipeline, c.Batch = PipelineWindow, 2000 }},
		{"zipf batch (keys redrawn)", func(c *Config) { c.Zipf = true }},
		{"mix", func(c *Config) { c.OpMix = []MixShare{{Op: "GET", Percent: 80}, {Op: "SET", Percent: 20}} }},
		{"online", func(c *Config) {
			c.Online, c.InFlight, c.OpWorkload, c.OpPercent = true, 4, []string{"GET"}, []int{100}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tlsConfigFor(t, r)
			cfg.SkipLoad, cfg.Verify, cfg.ValueLength = true, true, load.ValueLength
			tt.edit(&cfg)
			rep, human, err := runJSON(t, context.Background(), cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, human)
			}
			if o := rep.Online; o != nil {
				if o.Ops == 0 || o.Hits != o.Ops || o.Misses != 0 || o.Mismatches != 0 {
					t.Errorf("online: got ops %d hits %d misses %d mismatches %d, want every GET a verified hit", o.Ops, o.Hits, o.Misses, o.Mismatches)
				}
				return
			}
			for _, c := range rep.Cells {
				if c.Ops == 0 || c.Hits != c.Ops || c.Misses != 0 || c.Mismatches != 0 || c.Errors != 0 {
					t.Errorf("got ops %d hits %d misses %d mismatches %d errors %d, want every op a verified hit", c.Ops, c.Hits, c.Misses, c.Mismatches, c.Errors)
				}
			}
		})
	}
}

// TestTLSHandshakeFailuresNamed points the client at servers it must
// refuse, each error naming what was wrong; --insecure passes a CA it does
// not know and a name the certificate is not for.
func TestTLSHandshakeFailuresNamed(t *testing.T) {
	good := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, aclUser...)
	expiredCert := testenv.TLSServerCert
	expiredCert.Expired = true
	expired := testenv.MustTLSRedisServer(t, expiredCert)
	other := testenv.MustTLSRedisServer(t, testenv.TLSServerCert) // only for its CA
	mutual := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, "--tls-auth-clients", "yes")
	certFile, keyFile := clientCertFiles(t, mutual)
	strangerCert, strangerKey := clientCertFiles(t, other)
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" : succeeds
	}{
		{"right CA, user and password", func(c *Config) {}, ""},
		{"wrong CA", func(c *Config) { c.TLS.CACertFile = other.CAFile }, "is not signed by the CA in --cacert " + other.CAFile},
		{"wrong CA, --insecure", func(c *Config) { c.TLS.CACertFile, c.TLS.Insecure = other.CAFile, true }, ""},
		{"expired certificate", func(c *Config) {
			c.Port, c.TLS.CACertFile, c.User, c.Auth = expired.TLSPort, expired.CAFile, "", ""
		}, "has expired or is not yet valid"},
		{"wrong SNI", func(c *Config) { c.TLS.SNI = "cache.example.com" }, `the server's certificate is for localhost, 127.0.0.1, not "cache.example.com" (--sni)`},
		{"wrong SNI, --insecure", func(c *Config) { c.TLS.SNI, c.TLS.Insecure = "cache.example.com", true }, ""},
		{"wrong password", func(c *Config) { c.Auth = "wrong" }, `refused AUTH as user "alice": server replied "WRONGPASS`},
		{"wrong user", func(c *Config) { c.User = "bob" }, `refused AUTH as user "bob"`},
		{"plain client, TLS port", func(c *Config) { c.TLS = nil }, "if that is the server's tls-port, give --tls"},
		{"client certificate", func(c *Config) {
			c.Port, c.User, c.Auth = mutual.TLSPort, "", ""
			c.TLS = &TLSOptions{CACertFile: mutual.CAFile, CertFile: certFile, KeyFile: keyFile}
		}, ""},
		{"no client certificate", func(c *Config) {
			c.Port, c.User, c.Auth, c.TLS.CACertFile = mutual.TLSPort, "", "", mutual.CAFile
		}, "requires a client certificate"},
		{"client certificate of another CA", func(c *Config) {
			c.Port, c.User, c.Auth = mutual.TLSPort, "", ""
			c.TLS = &TLSOptions{CACertFile: mutual.CAFile, CertFile: strangerCert, KeyFile: strangerKey}
		}, "refused the client certificate --cert " + strangerCert},
		{"TLS client, plain port", func(c *Config) { c.Port = good.Port }, "the server did not answer in TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tlsConfigFor(t, good)
			cfg.Runtime = 100 * time.Millisecond
			tt.edit(&cfg)
			_, human, err := runJSON(t, context.Background(), cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success\n%s", err, human)
			case tt.want != "" && err == nil:
				t.Fatalf("got success, want an error saying %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("got %q, want it to say %q", err, tt.want)
			case tt.want != "" && strings.Count(err.Error(), "\n") > 0:
				t.Fatalf("got %q over several lines, want one sentence", err)
			}
		})
	}
}

// clientCertFiles writes a client certificate signed by r's CA and its key.
func clientCertFiles(t *testing.T, r *testenv.TLSRedis) (certFile, keyFile string) {
	kp, err := r.CA.Issue(pki.Cert{Name: "bench client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := kp.WritePEM(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestApplyURI reads the peers' URIs.
func TestApplyURI(t *testing.T) {
	tests := []struct {
		uri        string
		host       string
		port       int
		user, auth string
		tls        bool
		wantErr    string
	}{
		{uri: "redis://localhost", host: "localhost", port: 6379},
		{uri: "rediss://alice:pw@cache.example.com:6380", host: "cache.example.com", port: 6380, user: "alice", auth: "pw", tls: true},
		{uri: "redis://:secret@10.0.0.2:7000/0", host: "10.0.0.2", port: 7000, auth: "secret"},
		{uri: "redis://secret@[::1]:7000", host: "::1", port: 7000, auth: "secret"},
		{uri: "http://localhost", wantErr: `the scheme is "http"`},
		{uri: "redis://localhost/3", wantErr: "selects database 3"},
		{uri: "rediss://:6380", wantErr: "names no host"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		err := ApplyURI(&cfg, tt.uri)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got %v, want an error saying %q", tt.uri, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.uri, err)
			continue
		}
		got := []any{cfg.Host, cfg.Port, cfg.User, cfg.Auth, cfg.TLS != nil}
		want := []any{tt.host, tt.port, tt.user, tt.auth, tt.tls}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: got host, port, user, auth, tls %v, want %v", tt.uri, got, want)
				break
			}
		}
	}
}

// TestTLSClusterBench drives a Redis Cluster whose nodes speak TLS alone to
// clients on their announced ports: the slot map is read over TLS, each
// master is dialled over TLS with its own name (127.0.0.1, checked against
// its certificate), and the load and verified GETs reach every master.
func TestTLSClusterBench(t *testing.T) {
	rc := testenv.MustTLSRedisCluster(t, 3)
	cfg := configFor(t, rc.TLSAddrs[1])
	cfg.Cluster = true
	cfg.TLS = &TLSOptions{CACertFile: rc.CAFile}
	cfg.Verify = true
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("cluster over TLS: %v\n%s", err, human)
	}
	if got, want := rep.Load.Acknowledged, cfg.DBSize; got != want {
		t.Errorf("acknowledged %d keys, want %d", got, want)
	}
	var total int64
	for _, r := range rc.Nodes {
		total += redisInt(t, r.Addr, "DBSIZE")
	}
	if total != cfg.DBSize {
		t.Errorf("DBSIZE over the masters sums to %d, want %d", total, cfg.DBSize)
	}
	for _, c := range rep.Cells {
		checkClusterCell(t, "tls", c, 3)
		for _, n := range c.Cluster.Nodes {
			if !slices.Contains(rc.TLSAddrs, n.Addr) {
				t.Errorf("node %s in the report, want one of the TLS addresses %v", n.Addr, rc.TLSAddrs)
			}
		}
	}
}
