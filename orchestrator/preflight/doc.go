// Package preflight runs a run's preflights, each a `tierbench preflight
// --json` whose checks it judges: the host's, once per run with the fio
// baseline the ceiling is taken from (Local); across hosts, every host's
// in a container there and each client host's link to the server
// (AcrossHosts, Network); and each row server's own checks (O_DIRECT,
// libaio, io_uring), run where that server runs (Server).
//
// Invariants: a failed check stops the run (fault.ErrPreflight) unless
// --force, except io_uring refused where the server runs, which --force
// cannot measure past; a bundle that already holds the host's preflight
// (--resume) is not probed again; the checks of tierbench's own server
// are warnings only for a server the run does not start. The package
// reaches the run only through Env and imports nothing of the facade.
package preflight
