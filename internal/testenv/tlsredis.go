package testenv

import (
	"fmt"
	"net"
	"os/exec"
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
	ca, caFile, certFile, keyFile := WriteTLSFiles(t, cert)
	tlsPort := FreePort(t)
	args := append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"}, extra...)
	r := MustRedisServer(t, args...)
	return &TLSRedis{Redis: r, TLSAddr: fmt.Sprintf("127.0.0.1:%d", tlsPort), TLSPort: tlsPort, CA: ca, CAFile: caFile}
}

// TLSRedisCluster is a Redis Cluster of masters whose clients and bus
// speak TLS (tls-cluster yes), every node's certificate signed by one CA
// made for the test.
type TLSRedisCluster struct {
	Nodes    []*Redis // each node's plain port: INFO, CLUSTER INFO, DBSIZE
	TLSAddrs []string // each node's TLS port, in the order of Nodes
	CAFile   string
}

// MustTLSRedisCluster starts n cluster-enabled redis-servers with TLS
// ports, joins them over TLS with redis-cli --tls --cluster create, waits
// until every node reports cluster_state:ok and stops them when the test
// ends. Their certificate is TLSServerCert's, valid for 127.0.0.1, the
// address they announce.
func MustTLSRedisCluster(t testing.TB, n int) *TLSRedisCluster {
	t.Helper()
	cli := MustLookPath(t, "redis-cli")
	c := &TLSRedisCluster{}
	var certFile, keyFile string
	_, c.CAFile, certFile, keyFile = WriteTLSFiles(t, TLSServerCert)
	for range n {
		tlsPort := FreePort(t)
		r := startRedis(t, FreePort, "", func(port int) []string {
			nodeDir := t.TempDir()
			return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--tls-port", strconv.Itoa(tlsPort),
				"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", c.CAFile,
				"--tls-auth-clients", "no", "--tls-cluster", "yes",
				"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(FreePort(t)),
				"--cluster-config-file", filepath.Join(nodeDir, "nodes.conf"),
				"--save", "", "--appendonly", "no", "--dir", nodeDir}
		})
		c.Nodes = append(c.Nodes, r)
		c.TLSAddrs = append(c.TLSAddrs, fmt.Sprintf("127.0.0.1:%d", tlsPort))
	}
	args := append([]string{"--tls", "--cacert", c.CAFile, "--cluster", "create"}, c.TLSAddrs...)
	if out, err := exec.Command(cli, append(args, "--cluster-yes")...).CombinedOutput(); err != nil {
		t.Fatalf("testenv: redis-cli --tls --cluster create: %v\n%s", err, out)
	}
	waitClusterOK(t, c.Nodes)
	return c
}

// WriteTLSFiles makes a CA and a certificate it signs as cert says, and
// writes the CA's certificate, the certificate and its key (mode 0600) into
// a directory of the test's.
func WriteTLSFiles(t testing.TB, cert pki.Cert) (ca *pki.CA, caFile, certFile, keyFile string) {
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
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "cert.key")
	if err := ca.WritePEM(caFile); err != nil {
		t.Fatal(err)
	}
	if err := kp.WritePEM(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return ca, caFile, certFile, keyFile
}
