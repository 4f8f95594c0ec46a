package orchestrator

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/pki"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// TLS in a run (--tls on|off|both, --server-addr rediss://…).
//
// TLS is a row dimension (results.Row.TLS), as the memory-tier sweep's
// sizes are: --tls both runs every row twice, without TLS and then with
// it, so each cell is measured both ways on the same dataset and the
// report sets them side by side with the server's CPU per GET of each.
//
// For the servers the run starts, it makes an ephemeral CA (internal/pki)
// and signs a server certificate (valid for loopback and the address the
// server listens on) and a client certificate with it. The CA's
// certificate is kept in the bundle (results.FileTLSCA); the keys are
// never written there, nor given on a command line: the process runtime
// reads them from 0600 files in a 0700 directory of the run's under
// Config.StateDir, removed when the run ends; containers (this host's
// engine and every host's across hosts) get them copied in through the
// engine's API at containerTLSDir, as the run's password is
// (dockerDriver.secrets). Every way the run reaches the server speaks TLS
// on a TLS row: the server has a TLS port alone (--port 0), the bench
// clients take --tls --cacert --cert --key, and the run's own probes
// (PING, DBSIZE, INFO, the sampled GETs, the owner proof; here or through
// hostprobe on the server's host) dial it with the same CA and
// certificate.

// TLS modes of Config.TLS.
const (
	TLSOn   = "on"
	TLSOff  = "off"
	TLSBoth = "both"
)

// runTLS is the TLS material of the servers a run starts.
type runTLS struct {
	ca     *pki.CA
	server *pki.KeyPair
	client *pki.KeyPair
	// conf is the probes' TLS configuration, from memory.
	conf *tls.Config
	// local is the 0700 directory of the files on this machine, removed
	// by close; dir is where the server and the clients read them (local,
	// or containerTLSDir in containers).
	local, dir string
}

// newRunTLS makes the run's CA and the server certificate for
// loopback and bind, and the client's; it writes the files into a 0700
// directory of the run's under stateDir and the CA into the bundle.
func newRunTLS(runID, stateDir, bundle, bind string) (*runTLS, error) {
	ca, err := pki.NewCA("tierbench run " + runID)
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	t := &runTLS{ca: ca}
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
		return nil, fmt.Errorf("orchestrator: the run's TLS files: %w", err)
	}
	t.dir = t.local
	for name, b := range t.files() {
		if err := safe.WriteNewFile(filepath.Join(t.local, name), b, 0o600); err != nil {
			t.Close()
			return nil, fmt.Errorf("orchestrator: the run's TLS files: %w", err)
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
func (t *runTLS) files() map[string][]byte {
	return map[string][]byte{
		rig.TLSCAFile:         t.ca.CertPEM(),
		rig.TLSServerCertFile: t.server.CertPEM(),
		rig.TLSServerKeyFile:  t.server.KeyPEM(),
		rig.TLSClientCertFile: t.client.CertPEM(),
		rig.TLSClientKeyFile:  t.client.KeyPEM(),
	}
}

// Close removes the run's TLS files from this machine.
func (t *runTLS) Close() error {
	if t == nil || t.local == "" {
		return nil
	}
	return os.RemoveAll(t.local)
}

// serverArgs are a TLS row's server flags: a TLS port alone, clients
// proving themselves with the run's client certificate.
func (t *runTLS) serverArgs(port string) []string {
	return []string{"--port", "0", "--tls-port", port,
		"--tls-cert-file", tlsPath(t.dir, rig.TLSServerCertFile), "--tls-key-file", tlsPath(t.dir, rig.TLSServerKeyFile),
		"--tls-ca-cert-file", tlsPath(t.dir, rig.TLSCAFile)}
}

// clientArgs are a TLS row's bench flags.
func (t *runTLS) clientArgs() []string {
	return []string{"--tls", "--cacert", tlsPath(t.dir, rig.TLSCAFile),
		"--cert", tlsPath(t.dir, rig.TLSClientCertFile), "--key", tlsPath(t.dir, rig.TLSClientKeyFile)}
}

// tlsPath joins a directory that may be a container's with a file name.
func tlsPath(dir, name string) string { return strings.TrimSuffix(dir, "/") + "/" + name }

// validateTLS refuses TLS where the run cannot give it.
func validateTLS(c plan.Config, bad func(string, ...any)) {
	switch c.TLS {
	case "", TLSOn, TLSOff, TLSBoth:
	default:
		bad("--tls %q: want on, off or both", c.TLS)
		return
	}
	on := c.TLS == TLSOn || c.TLS == TLSBoth
	if c.ServerAddr != "" {
		if c.TLS == TLSBoth {
			bad("--tls both with --server-addr: the server at --server-addr has the one port it was started with; measure each port in a run of its own (--server-addr rediss://… and redis://…) and compare the bundles")
		}
		if on && !c.ServerTLS {
			bad("--tls on with --server-addr: give the server's TLS address as rediss://[user@]host:port")
		}
		return
	}
	if c.CACert != "" || c.Insecure {
		bad("--cacert and --insecure apply to --server-addr rediss://…: the servers a run starts get a CA made for the run")
	}
	if !on {
		return
	}
	switch {
	case c.MaxShards() > 1:
		bad("--tls %s with --shards above 1 is not supported: the shards' cluster bus and redirects are plain TCP; use --shards 1", c.TLS)
	case c.ForeignServers():
		bad("--tls %s measures tierbench's own server: the catalogue does not give other servers' TLS flags; run them with --tls off", c.TLS)
	}
}

// tlsRows makes TLS a row dimension: with --tls both every row twice,
// without TLS and then with it; with --tls on every row with it.
func tlsRows(c plan.Config, rows []results.Row) []results.Row {
	switch {
	case c.TLS == TLSBoth:
		return plan.ExpandRows(rows, []bool{false, true}, func(r *results.Row, on bool) { r.TLS = on })
	case c.TLS == TLSOn || c.ServerTLS:
		out := slices.Clone(rows)
		for i := range out {
			out[i].TLS = true
		}
		return out
	}
	return rows
}

// externalAccess is how the run reaches the server at --server-addr, and
// the bench flags that say the same; a password goes to the clients in a
// 0600 file of the run's under Config.StateDir, returned to be removed.
func (r *runner) externalAccess() (rig.Access, []string, string, error) {
	a := rig.Access{User: r.cfg.ServerUser, Auth: r.cfg.ServerPassword}
	var args []string
	if r.cfg.ServerTLS {
		host, _, _ := net.SplitHostPort(r.cfg.ServerAddr)
		conf, err := rig.ClientTLSConfig(r.cfg.CACert, "", "", r.cfg.Insecure)
		if err != nil {
			return a, nil, "", err
		}
		conf.ServerName = host
		a.TLS = conf
		args = append(args, "--tls")
		if r.cfg.CACert != "" {
			args = append(args, "--cacert", r.cfg.CACert)
		}
		if r.cfg.Insecure {
			args = append(args, "--insecure")
		}
	}
	if a.User != "" {
		args = append(args, "--user", a.User)
	}
	if a.Auth == "" {
		return a, args, "", nil
	}
	file, err := r.writePasswordFile(a.Auth)
	if err != nil {
		return a, nil, "", err
	}
	return a, append(args, "--auth-file", file), r.secretDir, nil
}

// setupTLS makes the run's TLS material when a row of its own servers
// has TLS on, once the driver and the server's address are known; the
// auto default (--tls not given) turns TLS on across hosts beyond
// loopback.
func (r *runner) setupTLS() error {
	if r.cfg.TLS == "" && r.plan.Hosts != nil && !isLoopback(r.plan.Hosts.Bind) && r.cfg.Resume == "" {
		r.plan.Rows = tlsRows(plan.Config{TLS: TLSOn}, r.plan.Rows)
		r.printf("tls: on (across hosts beyond loopback; --tls off to refuse it)\n")
	}
	if r.cfg.TLS == TLSOff && r.plan.Hosts != nil && !isLoopback(r.plan.Hosts.Bind) {
		r.printf("tls: WARNING: off across hosts (--tls off): every request and reply crosses the network in clear\n")
	}
	if !slices.ContainsFunc(r.plan.Rows, func(row results.Row) bool { return row.TLS }) || !r.targets.Started() {
		return nil
	}
	t, err := newRunTLS(r.plan.RunID, r.cfg.StateDir, r.out, r.bindAddr())
	if err != nil {
		return err
	}
	if dir := r.drv.Capabilities().FilesDir; dir != "" {
		t.dir = dir
	}
	r.drv.Give(t.files())
	r.tls = t
	r.printf("tls: a CA made for this run (its certificate in %s; the keys only in %s, removed at the end)\n", filepath.Join(r.out, results.FileTLSCA), t.local)
	return nil
}

// rowAccess is how the run's probes reach a row's server it starts.
func (r *runner) rowAccess(row results.Row) rig.Access {
	a := rig.Access{Auth: r.auth}
	if row.TLS && r.tls != nil {
		a.TLS = r.tls.conf
	}
	return a
}

// tlsServerArgs are the TLS flags of a row's server it starts on port.
func (r *runner) tlsServerArgs(row results.Row, port int) []string {
	if !row.TLS || r.tls == nil {
		return nil
	}
	return r.tls.serverArgs(fmt.Sprint(port))
}

// tlsClientArgs are the TLS flags of every client of a row's server the
// run starts.
func (r *runner) tlsClientArgs(row results.Row) []string {
	if !row.TLS || r.tls == nil {
		return nil
	}
	return r.tls.clientArgs()
}

// tlsWord is how a progress line names a row's TLS.
func tlsWord(on bool) string {
	if on {
		return "TLS"
	}
	return "plain TCP"
}

// removeSecrets removes the run's TLS files and password file from this
// machine.
func (r *runner) removeSecrets() {
	if err := r.tls.Close(); err != nil {
		r.printf("cleanup: %v\n", err)
	}
	if r.secretDir != "" {
		os.RemoveAll(r.secretDir)
	}
}

// externalWords says how the run reaches the server at --server-addr,
// never its password.
func externalWords(c plan.Config) string {
	s := ", " + tlsWord(c.ServerTLS)
	if c.ServerUser != "" {
		s += " as user " + c.ServerUser
	}
	if c.ServerPassword != "" {
		s += " with a password (not kept in the bundle)"
	}
	return s
}
