package tlsrow

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/internal/pki"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// Material is the TLS material of the servers a run starts: a CA made
// for the run, the server's and the client's certificates and where
// they read them.
type Material struct {
	ca     *pki.CA
	server *pki.KeyPair
	client *pki.KeyPair
	// conf is the probes' TLS configuration, from memory.
	conf *tls.Config
	// local is the 0700 directory of the files on this machine, removed
	// by Close; dir is where the server and the clients read them (local,
	// or the runtime's files dir in containers).
	local, dir string
}

// newMaterial makes the run's CA and the server certificate for
// loopback and bind, and the client's; it writes the files into a 0700
// directory of the run's under stateDir and the CA into the bundle.
func newMaterial(runID, stateDir, bundle, bind string) (*Material, error) {
	ca, err := pki.NewCA("tierbench run " + runID)
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	t := &Material{ca: ca}
	if t.server, err = ca.Issue(pki.Cert{Name: "tierbench server", DNSNames: []string{"localhost"}, IPs: ips}); err != nil {
		return nil, err
	}
	if t.client, err = ca.Issue(pki.Cert{Name: "tierbench run " + runID, Client: true}); err != nil {
		return nil, err
	}
	cert, err := t.client.TLSCertificate()
	if err != nil {
		return nil, err
	}
	t.conf = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}
	t.local = safe.SecretDirs(stateDir, runID)[0]
	if err := safe.EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	// A run resumed after it was killed finds its own files still there.
	os.RemoveAll(t.local)
	if err := os.Mkdir(t.local, 0o700); err != nil {
		return nil, fmt.Errorf("tlsrow: the run's TLS files: %w", err)
	}
	t.dir = t.local
	for name, b := range t.files() {
		if err := safe.WriteNewFile(filepath.Join(t.local, name), b, 0o600); err != nil {
			t.Close()
			return nil, fmt.Errorf("tlsrow: the run's TLS files: %w", err)
		}
	}
	if err := ca.WritePEM(filepath.Join(bundle, results.FileTLSCA)); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// files are the TLS files by name: what the state dir holds and what is
// copied into every container.
func (t *Material) files() map[string][]byte {
	return map[string][]byte{
		rig.TLSCAFile:         t.ca.CertPEM(),
		rig.TLSServerCertFile: t.server.CertPEM(),
		rig.TLSServerKeyFile:  t.server.KeyPEM(),
		rig.TLSClientCertFile: t.client.CertPEM(),
		rig.TLSClientKeyFile:  t.client.KeyPEM(),
	}
}

// Close removes the run's TLS files from this machine; a nil Material
// has none.
func (t *Material) Close() error {
	if t == nil || t.local == "" {
		return nil
	}
	return os.RemoveAll(t.local)
}

// config is the probes' TLS configuration; nil in clear.
func (t *Material) config() *tls.Config {
	if t == nil {
		return nil
	}
	return t.conf
}

// serverArgs are a TLS row's server flags: a TLS port alone, clients
// proving themselves with the run's client certificate; none in clear.
func (t *Material) serverArgs(port string) []string {
	if t == nil {
		return nil
	}
	return []string{"--port", "0", "--tls-port", port,
		"--tls-cert-file", tlsPath(t.dir, rig.TLSServerCertFile), "--tls-key-file", tlsPath(t.dir, rig.TLSServerKeyFile),
		"--tls-ca-cert-file", tlsPath(t.dir, rig.TLSCAFile)}
}

// clientArgs are a TLS row's bench flags; none in clear.
func (t *Material) clientArgs() []string {
	if t == nil {
		return nil
	}
	return []string{"--tls", "--cacert", tlsPath(t.dir, rig.TLSCAFile),
		"--cert", tlsPath(t.dir, rig.TLSClientCertFile), "--key", tlsPath(t.dir, rig.TLSClientKeyFile)}
}

// tlsPath joins a directory that may be a container's with a file name.
func tlsPath(dir, name string) string { return strings.TrimSuffix(dir, "/") + "/" + name }
