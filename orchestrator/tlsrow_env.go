package orchestrator

import (
	"os"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/tlsrow"
	"github.com/tierbench/tierbench/results"
)

// The facade's side of package tlsrow: the run's TLS material, made once
// the driver and the server's address are known, and the facade's names
// for what its targets ask of it.

// setupTLS makes the run's TLS material (tlsrow.Setup); the auto default
// may turn TLS on in every row of the plan.
func (r *runner) setupTLS() (err error) {
	r.plan.Rows, r.tls, err = tlsrow.Setup(tlsrow.Env{
		Config:  r.cfg,
		RunID:   r.plan.RunID,
		Bundle:  r.out,
		Bind:    r.bindAddr(),
		Started: r.targets.Started(),
		Driver:  r.drv,
		Printf:  r.printf,
	}, r.plan.Rows)
	return err
}

// rowAccess is how the run's probes reach a row's server it starts.
func (r *runner) rowAccess(row results.Row) rig.Access { return r.tls.Access(row, r.auth) }

// tlsServerArgs are the TLS flags of a row's server it starts on port.
func (r *runner) tlsServerArgs(row results.Row, port int) []string {
	return r.tls.ServerArgs(row, port)
}

// tlsClientArgs are the TLS flags of every client of a row's server the
// run starts.
func (r *runner) tlsClientArgs(row results.Row) []string { return r.tls.ClientArgs(row) }

// externalAccess is how the run reaches the server at --server-addr
// (tlsrow.External), the bench flags that say the same, and the
// directory of the password file its clients read ("" without one), for
// removeSecrets.
func (r *runner) externalAccess() (rig.Access, []string, string, error) {
	a, args, err := tlsrow.External(r.cfg, r.writePasswordFile)
	if err != nil || a.Auth == "" {
		return a, args, "", err
	}
	return a, args, r.secretDir, nil
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
