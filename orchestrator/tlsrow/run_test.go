package tlsrow

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/results"
)

// TestSetup: the auto default turns TLS on in every row across hosts
// beyond loopback only (and not on --resume, whose rows are the plan's);
// material is made only for a TLS row of servers the run starts, its
// files 0600 in a 0700 directory of the state dir, the CA's certificate
// in the bundle, all of it gone after Close.
func TestSetup(t *testing.T) {
	plain := []results.Row{{Backend: "libaio", Pin: plan.PinNone}, {Backend: "uring", Pin: plan.PinNone}}
	for _, tc := range []struct {
		name         string
		cfg          plan.Config
		bind         string
		started      bool
		wantRows     string
		wantMaterial bool
		wantSaid     string
	}{
		{"default on loopback", plan.Config{}, "127.0.0.1", true, "libaio/none uring/none", false, ""},
		{"default beyond loopback", plan.Config{}, "10.0.0.5", true, "libaio/none/tls uring/none/tls", true, "tls: on (across hosts beyond loopback"},
		{"default beyond loopback, resumed", plan.Config{Workload: results.Workload{Resume: "/bundle"}}, "10.0.0.5", true, "libaio/none uring/none", false, ""},
		{"off beyond loopback", plan.Config{Workload: results.Workload{TLS: Off}}, "10.0.0.5", true, "libaio/none uring/none", false, "tls: WARNING: off across hosts"},
		{"on, a server the run does not start", plan.Config{Workload: results.Workload{TLS: On}}, "127.0.0.1", false, "libaio/none/tls uring/none/tls", false, ""},
		{"both on loopback", plan.Config{Workload: results.Workload{TLS: Both}}, "127.0.0.1", true, "libaio/none libaio/none/tls uring/none uring/none/tls", true, "tls: a CA made for this run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.StateDir = filepath.Join(t.TempDir(), "state")
			bundle := t.TempDir()
			var said strings.Builder
			rows := Rows(tc.cfg, plain)
			env := Env{Config: tc.cfg, RunID: "tlsrow-test", Bundle: bundle, Bind: tc.bind, Started: tc.started,
				Driver: process.NewDriver("", nil), Printf: func(f string, a ...any) { fmt.Fprintf(&said, f, a...) }}
			got, m, err := Setup(env, rows)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID())
			}
			if g := strings.Join(ids, " "); g != tc.wantRows {
				t.Errorf("rows: got %s, want %s", g, tc.wantRows)
			}
			if !strings.Contains(said.String(), tc.wantSaid) {
				t.Errorf("said %q, want it to say %q", said.String(), tc.wantSaid)
			}
			if (m != nil) != tc.wantMaterial {
				t.Fatalf("material: got %v, want %v", m != nil, tc.wantMaterial)
			}
			if m == nil {
				if _, err := os.Stat(filepath.Join(bundle, results.FileTLSCA)); !os.IsNotExist(err) {
					t.Errorf("no material, yet the bundle has %s: %v", results.FileTLSCA, err)
				}
				return
			}
			checkFiles(t, m, bundle)
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(m.local); !os.IsNotExist(err) {
				t.Errorf("after Close: %s is still there (%v)", m.local, err)
			}
		})
	}
}

// checkFiles checks the material's files on this machine and in the
// bundle.
func checkFiles(t *testing.T, m *Material, bundle string) {
	t.Helper()
	if st, err := os.Stat(m.local); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("the TLS files' directory %s: %v, %v; want a 0700 directory", m.local, st, err)
	}
	for _, name := range []string{rig.TLSCAFile, rig.TLSServerCertFile, rig.TLSServerKeyFile, rig.TLSClientCertFile, rig.TLSClientKeyFile} {
		st, err := os.Stat(filepath.Join(m.local, name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want a 0600 file", name, st, err)
		}
	}
	ca, err := os.ReadFile(filepath.Join(bundle, results.FileTLSCA))
	if err != nil || !strings.Contains(string(ca), "BEGIN CERTIFICATE") {
		t.Errorf("the bundle's CA: %q, %v; want a PEM certificate", ca, err)
	}
	if b, _ := os.ReadFile(filepath.Join(bundle, results.FileTLSCA)); strings.Contains(string(b), "PRIVATE KEY") {
		t.Errorf("the bundle's CA file holds a private key")
	}
}

// TestMaterialHandshake: a TLS row's server, given the flags' files,
// accepts the probes' access and a client certificate of the run's CA
// only; a plain row, or no material, gives no TLS at all.
func TestMaterialHandshake(t *testing.T) {
	m, err := newMaterial("tlsrow-test", filepath.Join(t.TempDir(), "state"), t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tlsRow, plainRow := results.Row{Backend: "libaio", TLS: true}, results.Row{Backend: "libaio"}

	args := m.ServerArgs(tlsRow, 6390)
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("server args %q lack %s", args, name)
		}
		return args[i+1]
	}
	if flag("--port") != "0" || flag("--tls-port") != "6390" {
		t.Errorf("server args %q: want a TLS port alone", args)
	}
	cert, err := tls.LoadX509KeyPair(flag("--tls-cert-file"), flag("--tls-key-file"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(flag("--tls-ca-cert-file"))
	if err != nil {
		t.Fatal(err)
	}
	serverConf := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: m.ca.Pool()}
	if !strings.Contains(string(caPEM), "BEGIN CERTIFICATE") {
		t.Errorf("--tls-ca-cert-file holds %q, want the CA's certificate", caPEM)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverConf)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()

	a := m.Access(tlsRow, "pw")
	if a.Auth != "pw" || a.TLS == nil {
		t.Fatalf("TLS row's access: auth %q, TLS %v; want the password and TLS", a.Auth, a.TLS != nil)
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), a.TLS)
	if err != nil {
		t.Fatalf("the probes' access to the TLS row's server: %v", err)
	}
	c.Close()
	// A client without the run's certificate is refused by the server.
	stranger := &tls.Config{RootCAs: m.ca.Pool()}
	if c, err := tls.Dial("tcp", ln.Addr().String(), stranger); err == nil {
		_, err = c.Read(make([]byte, 1))
		c.Close()
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("a client without the run's certificate: read error %v, want the server's refusal", err)
		}
	}

	if got := m.ClientArgs(tlsRow); len(got) != 7 || got[0] != "--tls" {
		t.Errorf("TLS row's client args: got %q, want --tls and the three files", got)
	}
	var none *Material
	for name, got := range map[string][]string{
		"plain row's server": m.ServerArgs(plainRow, 6390), "plain row's client": m.ClientArgs(plainRow),
		"no material's server": none.ServerArgs(tlsRow, 6390), "no material's client": none.ClientArgs(tlsRow),
	} {
		if got != nil {
			t.Errorf("%s args: got %q, want none", name, got)
		}
	}
	if a := none.Access(tlsRow, "pw"); a.TLS != nil || a.Auth != "pw" {
		t.Errorf("no material's access: got TLS %v auth %q, want no TLS and the password", a.TLS != nil, a.Auth)
	}
}

// TestExternal: the access to --server-addr and its bench flags say the
// same: TLS with the CA given or none, the user, and a password only
// through the file writePassword makes.
func TestExternal(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	m, err := newMaterial("tlsrow-test", filepath.Join(t.TempDir(), "state"), filepath.Dir(caFile), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.WriteFile(caFile, m.ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cfg      plan.Config
		wantArgs string
		wantTLS  bool
	}{
		{"plain, no password", plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379"}}, "", false},
		{"plain with a user and password", plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", ServerUser: "alice"}, ServerPassword: "s3cret"}, "--user alice --auth-file FILE", false},
		{"rediss with a CA", plan.Config{Workload: results.Workload{ServerAddr: "cache.example.com:6380", ServerTLS: true, CACert: caFile}}, "--tls --cacert " + caFile, true},
		{"rediss, insecure, a password", plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6380", ServerTLS: true, Insecure: true}, ServerPassword: "s3cret"}, "--tls --insecure --auth-file FILE", true},
	} {
		file := filepath.Join(t.TempDir(), "pw")
		var wrote string
		a, args, err := External(tc.cfg, func(auth string) (string, error) { wrote = auth; return file, nil })
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := strings.ReplaceAll(strings.Join(args, " "), file, "FILE"); got != tc.wantArgs {
			t.Errorf("%s: args %q, want %q", tc.name, got, tc.wantArgs)
		}
		if wrote != tc.cfg.ServerPassword || a.Auth != tc.cfg.ServerPassword || a.User != tc.cfg.ServerUser {
			t.Errorf("%s: wrote %q, access user %q auth %q; want the config's user and password", tc.name, wrote, a.User, a.Auth)
		}
		if (a.TLS != nil) != tc.wantTLS {
			t.Errorf("%s: TLS %v, want %v", tc.name, a.TLS != nil, tc.wantTLS)
		} else if a.TLS != nil && a.TLS.ServerName != strings.Split(tc.cfg.ServerAddr, ":")[0] {
			t.Errorf("%s: TLS server name %q, want the address's host", tc.name, a.TLS.ServerName)
		}
	}
	if _, _, err := External(plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6380", ServerTLS: true, CACert: filepath.Join(t.TempDir(), "none.pem")}}, nil); err == nil {
		t.Errorf("a CA file that is not there: got no error")
	}
}
