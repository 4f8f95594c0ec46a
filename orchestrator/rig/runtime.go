package rig

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/results"
)

// Driver starts the server and the client somewhere: as containers or as
// child processes. Every driver removes all it started in close.
type Driver interface {
	Name() string
	// DataPath is the server's view of the host data directory.
	DataPath(host string) string
	StartServer(ctx context.Context, s ServerSpec) (ServerHandle, error)
	// RunClient runs one `tierbench bench` to completion and returns its
	// stdout and the placement it actually had.
	RunClient(ctx context.Context, s ClientSpec) ([]byte, results.Placement, error)
	// Host is the machine its servers run on (host.go).
	Host() ServerHost
	// PreflightAt runs a preflight (without fio) where the server runs:
	// inside its container for Docker, on the host for processes.
	// args are the planning flags (--dbsize, --memory, …).
	PreflightAt(ctx context.Context, srv ServerHandle, dataDir string, args []string) ([]byte, error)
	// Give makes files (the run's TLS certificates and keys) readable by
	// every server and client it starts from now on: copied into each
	// container at containerTLSDir; a process reads them where they are.
	Give(files map[string][]byte)
	Close(ctx context.Context) error
}

type ServerSpec struct {
	Name       string   // e.g. "libaio-pinned", for logs
	Args       []string // after the binary: "server", flags…
	CPUs, Mems string   // "" = not pinned
	LogPath    string
	DataDir    string // host path, bind-mounted for containers
	// Program is the argv before Args of a server that is not tierbench,
	// for the process runtime; Image the image (and entrypoint) of one for
	// Docker. Both zero: tierbench's own binary or image.
	Program []string
	Image   ImageRun
	// Access is how the run's probes reach it: TLS, the password.
	Access Access
}

type ClientSpec struct {
	Name       string
	Host       int      // which client host runs it (--client-hosts order); 0 without hosts
	Args       []string // "bench", flags…
	CPUs, Mems string
	LogPath    string
}

type ServerHandle interface {
	Pid() int // on this host, for /proc
	Placement() results.Placement
	Mode() string // how it runs: "process", "docker, privileged", …
	Stop(ctx context.Context) error
	// Probe reaches the server listening on addr, and its process's
	// counters where it runs.
	Probe(addr string) ServerProbe
	// FindServer takes the process that listens on addr, in the tree of
	// the one started (the real server behind a launcher), as pid from
	// then on.
	FindServer(ctx context.Context, addr string, timeout time.Duration) error
}
