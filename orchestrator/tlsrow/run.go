package tlsrow

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// Driver is what Setup needs of the run's runtime: where the files it
// is given appear to the servers and clients, and the giving.
type Driver interface {
	Capabilities() rig.Capabilities
	Give(files map[string][]byte)
}

// Env is the run as its TLS sees it, once the runtime and the server's
// address are known.
type Env struct {
	Config plan.Config
	RunID  string
	// Bundle is the results bundle's directory: the CA's certificate
	// goes there.
	Bundle string
	// Bind is where the servers listen: loopback on one machine.
	Bind string
	// Started says the run starts its servers (no material for a server
	// at --server-addr).
	Started bool
	Driver  Driver
	// Printf says progress on the run's stderr.
	Printf func(format string, a ...any)
}

// Setup makes the run's TLS material when a row of its own servers has
// TLS on, and hands the files to the runtime. It returns the rows, TLS
// turned on in every one by the auto default (--tls not given) across
// hosts beyond loopback, and the material, nil without a TLS row.
func Setup(env Env, rows []results.Row) ([]results.Row, *Material, error) {
	c := env.Config
	beyond := !isLoopback(env.Bind)
	if c.TLS == "" && beyond && c.Resume == "" {
		rows = Rows(plan.Config{Workload: results.Workload{TLS: On}}, rows)
		env.Printf("tls: on (across hosts beyond loopback; --tls off to refuse it)\n")
	}
	if c.TLS == Off && beyond {
		env.Printf("tls: WARNING: off across hosts (--tls off): every request and reply crosses the network in clear\n")
	}
	if !slices.ContainsFunc(rows, func(row results.Row) bool { return row.TLS }) || !env.Started {
		return rows, nil, nil
	}
	t, err := newMaterial(env.RunID, c.StateDir, env.Bundle, env.Bind)
	if err != nil {
		return rows, nil, err
	}
	if dir := env.Driver.Capabilities().FilesDir; dir != "" {
		t.dir = dir
	}
	env.Driver.Give(t.files())
	env.Printf("tls: a CA made for this run (its certificate in %s; the keys only in %s, removed at the end)\n", filepath.Join(env.Bundle, results.FileTLSCA), t.local)
	return rows, t, nil
}

func isLoopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// ofRow is the material a row's server is reached with: t for a row
// over TLS, nil for one in clear (t is nil too in a run without a TLS
// row). It is the one place a row's TLS decides its flags and access;
// the methods below hold for a nil material, a row in clear.
func (t *Material) ofRow(row results.Row) *Material {
	if !row.TLS {
		return nil
	}
	return t
}

// Access is how the run's probes reach a row's server it starts, with
// the servers' password auth.
func (t *Material) Access(row results.Row, auth string) rig.Access {
	return rig.Access{Auth: auth, TLS: t.ofRow(row).config()}
}

// ServerArgs are the TLS flags of a row's server the run starts on
// port.
func (t *Material) ServerArgs(row results.Row, port int) []string {
	return t.ofRow(row).serverArgs(fmt.Sprint(port))
}

// ClientArgs are the TLS flags of every client of a row's server the
// run starts.
func (t *Material) ClientArgs(row results.Row) []string {
	return t.ofRow(row).clientArgs()
}

// External is how the run reaches the server at --server-addr, and the
// bench flags that say the same; a password goes to the clients in a
// file writePassword makes (a 0600 file of the run's under
// Config.StateDir) and names.
func External(c plan.Config, writePassword func(auth string) (string, error)) (rig.Access, []string, error) {
	a := rig.Access{User: c.ServerUser, Auth: c.ServerPassword}
	var args []string
	if c.ServerTLS {
		host, _, _ := net.SplitHostPort(c.ServerAddr)
		conf, err := rig.ClientTLSConfig(c.CACert, "", "", c.Insecure)
		if err != nil {
			return a, nil, err
		}
		conf.ServerName = host
		a.TLS = conf
		args = append(args, "--tls")
		if c.CACert != "" {
			args = append(args, "--cacert", c.CACert)
		}
		if c.Insecure {
			args = append(args, "--insecure")
		}
	}
	if a.User != "" {
		args = append(args, "--user", a.User)
	}
	if a.Auth == "" {
		return a, args, nil
	}
	file, err := writePassword(a.Auth)
	if err != nil {
		return a, nil, err
	}
	return a, append(args, "--auth-file", file), nil
}
