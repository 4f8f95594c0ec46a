package orchestrator

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/results"
)

// driver starts the server and the client somewhere: as containers or as
// child processes. Every driver removes all it started in close.
type driver interface {
	name() string
	// dataPath is the server's view of the host data directory.
	dataPath(host string) string
	startServer(ctx context.Context, s serverSpec) (serverHandle, error)
	// runClient runs one `tierbench bench` to completion and returns its
	// stdout and the placement it actually had.
	runClient(ctx context.Context, s clientSpec) ([]byte, results.Placement, error)
	// host is the machine its servers run on (host.go).
	host() serverHost
	// preflightAt runs a preflight (without fio) where the server runs:
	// inside its container for Docker, on the host for processes.
	// args are the planning flags (--dbsize, --memory, …).
	preflightAt(ctx context.Context, srv serverHandle, dataDir string, args []string) ([]byte, error)
	// give makes files (the run's TLS certificates and keys) readable by
	// every server and client it starts from now on: copied into each
	// container at containerTLSDir; a process reads them where they are.
	give(files map[string][]byte)
	Close(ctx context.Context) error
}

type serverSpec struct {
	Name       string   // e.g. "libaio-pinned", for logs
	Args       []string // after the binary: "server", flags…
	CPUs, Mems string   // "" = not pinned
	LogPath    string
	DataDir    string // host path, bind-mounted for containers
	// Program is the argv before Args of a server that is not tierbench,
	// for the process runtime; Image the image (and entrypoint) of one for
	// Docker. Both zero: tierbench's own binary or image.
	Program []string
	Image   imageRun
	// Access is how the run's probes reach it: TLS, the password.
	Access access
}

type clientSpec struct {
	Name       string
	Host       int      // which client host runs it (--client-hosts order); 0 without hosts
	Args       []string // "bench", flags…
	CPUs, Mems string
	LogPath    string
}

type serverHandle interface {
	Pid() int // on this host, for /proc
	placement() results.Placement
	mode() string // how it runs: "process", "docker, privileged", …
	stop(ctx context.Context) error
	// probe reaches the server listening on addr, and its process's
	// counters where it runs.
	probe(addr string) serverProbe
	// findServer takes the process that listens on addr, in the tree of
	// the one started (the real server behind a launcher), as pid from
	// then on.
	findServer(ctx context.Context, addr string, timeout time.Duration) error
}
