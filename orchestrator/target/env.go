package target

import (
	"context"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// Env is the run as the targets see it: what is known only once the run
// has picked its driver, and the parts of other steps (the row's TLS, the
// preflight where the server runs, the client fleet's network check) a
// start takes part in. The facade hands it over; this package calls no
// other step's functions.
type Env interface {
	// Printf says progress on the run's stderr.
	Printf(format string, a ...any)
	// Driver starts the servers; Host is the machine they run on.
	Driver() rig.Driver
	Host() rig.ServerHost
	// Password is the run's password as its servers take it (zero:
	// none); it is made after the targets are picked.
	Password() Password
	// Bind is the address a server the run starts listens on; ServerPort
	// the port of the next row's server.
	Bind() string
	ServerPort() (int, error)
	// Access is how the run's probes reach a row's server: its password
	// and, for a TLS row, the run's TLS.
	Access(row results.Row) rig.Access
	// ServerTLSArgs are the TLS flags of a row's server on port, and
	// ClientTLSArgs those of its every client; none for a plain row.
	ServerTLSArgs(row results.Row, port int) []string
	ClientTLSArgs(row results.Row) []string
	// Preflight runs the preflight where the row's server srv runs, on
	// dataDir, noting the io_uring probe in tgt; an error fails the row.
	Preflight(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string, tgt *Server) error
	// CheckNetwork measures the clients' link to a row's server.
	CheckNetwork(ctx context.Context, tgt Server) error
	// ExternalReach is how the run reaches the server at --server-addr.
	ExternalReach() (Reach, error)
}

// Reach is how the run reaches the server at --server-addr.
type Reach struct {
	Access rig.Access // the run's probes'
	// ClientArgs are its clients' TLS, user and password-file flags.
	ClientArgs []string
	// Words say it in a progress line, never the password.
	Words string
}
