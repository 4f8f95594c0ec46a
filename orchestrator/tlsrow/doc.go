// Package tlsrow is TLS in a run (--tls on|off|both, --server-addr
// rediss://…): the row dimension (Dimension, Rows), the refusals of
// what a run cannot give over TLS (Validate), the TLS material of the
// servers a run starts (Material, made by Setup) and how the run reaches
// the server at --server-addr (External).
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
// Config.StateDir, removed when the run ends (Material.Close); containers
// (this host's engine and every host's across hosts) get them copied in
// through the engine's API at the runtime's files dir, as the run's
// password is (rig.Driver.Give). Every way the run reaches the server
// speaks TLS on a TLS row: the server has a TLS port alone (--port 0),
// the bench clients take --tls --cacert --cert --key, and the run's own
// probes (PING, DBSIZE, INFO, the sampled GETs, the owner proof; here or
// through hostprobe on the server's host) dial it with the same CA and
// certificate.
//
// The package imports nothing of the facade; a nil *Material (no TLS
// row, or a server the run does not start) gives no TLS flags.
package tlsrow
