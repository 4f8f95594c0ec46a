package testenv

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/internal/pki"
)

// TLSRedis is a redis-server with a TLS port whose certificate a CA made
// for the test signed. The plain port stays open (it is how the server is
// proven to be the process started, and how a test reads INFO).
type TLSRedis struct {
	*Redis
	TLSAddr string // 127.0.0.1:tls-port
	TLSPort int
	CA      *pki.CA
	CAFile  string // the CA certificate in PEM: redis-server's tls-ca-cert-file, a client's --cacert
}

// TLSServerCert is the certificate MustTLSRedisServer gives redis-server
// unless told otherwise: valid for localhost and 127.0.0.1.
var TLSServerCert = pki.Cert{Name: "redis-server", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}

// MustTLSRedisServer starts a redis-server as MustRedisServer does, with a
// new CA and a certificate of that CA issued as cert says (TLSServerCert,
// or an expired one, another name…) on a TLS port; clients are not asked
// for certificates unless extra says --tls-auth-clients yes. Extra
// arguments go to redis-server, such as an ACL user: "--user", "alice",
// "on", ">pw", "~*", "+@all".
func MustTLSRedisServer(t testing.TB, cert pki.Cert, extra ...string) *TLSRedis {
	t.Helper()
	ca, err := pki.NewCA("tierbench test CA")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(cert)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile, certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if err := ca.WritePEM(caFile); err != nil {
		t.Fatal(err)
	}
	if err := kp.WritePEM(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	tlsPort := FreePort(t)
	args := append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"}, extra...)
	r := MustRedisServer(t, args...)
	return &TLSRedis{Redis: r, TLSAddr: fmt.Sprintf("127.0.0.1:%d", tlsPort), TLSPort: tlsPort, CA: ca, CAFile: caFile}
}
