package rig

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/results"
)

// Driver starts the server and the client somewhere: as containers or as
// child processes. Every driver removes all it started in close.
type Driver interface {
	// Name is the runtime's name for plan.json and progress lines; the
	// run never decides by it: it asks Capabilities.
	Name() string
	// Capabilities says what the runtime can do.
	Capabilities() Capabilities
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

// ErrUnavailable marks a runtime that cannot run here (no engine
// answers): the run may fall back to another.
var ErrUnavailable = errors.New("runtime unavailable")

// Unavailable wraps err, which says why, as ErrUnavailable; its message is
// err's alone.
func Unavailable(err error) error { return unavailable{err} }

type unavailable struct{ err error }

func (u unavailable) Error() string   { return u.err.Error() }
func (u unavailable) Unwrap() []error { return []error{ErrUnavailable, u.err} }

// Capabilities are what a runtime can do, asked in place of its name, so
// that a new runtime says what it supports in one place.
type Capabilities struct {
	// Images: it starts servers from images (--server-image), where a
	// server other than tierbench runs alone, with no tierbench beside
	// it to run a preflight.
	Images bool
	// FilesDir is where the files handed over with Give appear to the
	// servers and clients it starts; "" where they are read in place.
	FilesDir string
}

// PasswordKeeper is a Driver that carries the run's password into what
// it starts itself (copied into each container), rather than having the
// run write it in a file of this machine: KeepPassword hands it over
// and returns where the servers and clients find it.
type PasswordKeeper interface {
	KeepPassword(auth string) (path string)
}

type ServerSpec struct {
	Name       string   // e.g. "libaio-pinned", for logs
	Args       []string // after the binary: "server", flags…
	CPUs, Mems string   // "" = not pinned
	LogPath    string
	DataDir    string // host path, bind-mounted for containers
	// OwnDir is the directory below DataDir the run made for a server
	// other than tierbench alone (server-NAME): a container sees only it,
	// given to the user the image runs as; "" for tierbench's own, which
	// writes DataDir itself.
	OwnDir string
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

// ContainerDataDir is where the data dir is bind-mounted in the server.
const ContainerDataDir = "/data"

// ImageRun is the image a container runs and, when set, the entrypoint
// that replaces the image's own; the zero imageRun is the run's tierbench
// image.
type ImageRun struct {
	Name       string
	Entrypoint []string
}

// WaitFor retries f every 100 ms until it succeeds or timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = f(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
