package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	server := Cert{Name: "server", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}
	client := Cert{Name: "client", Client: true}
	expired := server
	expired.Expired = true
	for _, tc := range []struct {
		name    string
		issuer  *CA
		cert    Cert
		roots   *CA
		host    string
		usage   x509.ExtKeyUsage
		wantErr error // nil: verifies; otherwise an error of this type
	}{
		{"server by DNS name", ca, server, ca, "localhost", x509.ExtKeyUsageServerAuth, nil},
		{"server by IP", ca, server, ca, "127.0.0.1", x509.ExtKeyUsageServerAuth, nil},
		{"server as a client", ca, server, ca, "", x509.ExtKeyUsageClientAuth, nil},
		{"client", ca, client, ca, "", x509.ExtKeyUsageClientAuth, nil},
		{"client as a server", ca, client, ca, "", x509.ExtKeyUsageServerAuth, x509.CertificateInvalidError{}},
		{"wrong host", ca, server, ca, "example.com", x509.ExtKeyUsageServerAuth, x509.HostnameError{}},
		{"wrong CA", ca, server, other, "localhost", x509.ExtKeyUsageServerAuth, x509.UnknownAuthorityError{}},
		{"expired", ca, expired, ca, "localhost", x509.ExtKeyUsageServerAuth, x509.CertificateInvalidError{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := tc.issuer.Issue(tc.cert)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kp.Cert.Verify(x509.VerifyOptions{
				DNSName:   tc.host,
				Roots:     tc.roots.Pool(),
				KeyUsages: []x509.ExtKeyUsage{tc.usage},
			})
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil {
					t.Errorf("got %v, want a verified chain", err)
				}
			case x509.CertificateInvalidError:
				if !errors.As(err, &want) {
					t.Errorf("got %v (%T), want a %T", err, err, want)
				} else if tc.cert.Expired && want.Reason != x509.Expired {
					t.Errorf("got reason %v, want x509.Expired", want.Reason)
				}
			case x509.HostnameError:
				if !errors.As(err, &want) {
					t.Errorf("got %v (%T), want a %T", err, err, want)
				}
			case x509.UnknownAuthorityError:
				if !errors.As(err, &want) {
					t.Errorf("got %v (%T), want a %T", err, err, want)
				}
			}
		})
	}
}

func TestExpiredWindow(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(Cert{Name: "old", DNSNames: []string{"localhost"}, Expired: true})
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); !kp.Cert.NotAfter.Before(now) || !kp.Cert.NotBefore.Before(kp.Cert.NotAfter) {
		t.Errorf("got validity %v to %v, want a window ending before %v", kp.Cert.NotBefore, kp.Cert.NotAfter, now)
	}
}

func TestIssueRefuses(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Cert{
		{Name: "no names"},
		{Name: "negative", DNSNames: []string{"localhost"}, Valid: -time.Hour},
	} {
		if _, err := ca.Issue(c); err == nil {
			t.Errorf("Issue(%+v): got no error, want one", c)
		}
	}
}

// TestHandshake runs a TLS 1.3 handshake with client authentication over a
// pipe with pairs written to files and read back as Redis and the peer
// benchmarks read them.
func TestHandshake(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(Cert{Name: "server", DNSNames: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ca.Issue(Cert{Name: "client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	caPath := filepath.Join(dir, "ca.crt")
	if err := ca.WritePEM(caPath); err != nil {
		t.Fatal(err)
	}
	srvCert, srvKey := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := srv.WritePEM(srvCert, srvKey); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(srvKey); err != nil {
		t.Fatal(err)
	} else if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode: got %v, want -rw-------", got)
	}
	pair, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file holds no certificate")
	}
	cliPair, err := cli.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
		done <- s.Handshake()
	}()
	c := tls.Client(b, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", Certificates: []tls.Certificate{cliPair}})
	if err := c.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got := c.ConnectionState().Version; got != tls.VersionTLS13 {
		t.Errorf("TLS version: got %x, want %x", got, tls.VersionTLS13)
	}
}
