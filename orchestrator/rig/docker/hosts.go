package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

// Endpoint is one Docker engine a run drives: a host. Its Name names the
// host in progress lines and in the bundle (hosts/<name>/).
type Endpoint struct {
	Name string `json:"name"`
	// Host is what the engine is dialled at: unix:///path, tcp://host:port
	// or ssh://[user@]host[:port]; "" is the engine the environment names
	// (DOCKER_HOST, else the local socket), as before hosts existed.
	Host string `json:"host"`
	// Context is the Docker context the endpoint came from, if any.
	Context string `json:"context,omitempty"`

	TLSDir    string // ca.pem, cert.pem, key.pem of a context
	tlsVerify bool
}

// local reports whether the endpoint is the engine of the environment,
// which for a run without hosts is the machine the orchestrator runs on.
func (e Endpoint) local() bool { return e.Host == "" }

// hostNameRE is what a host name may hold: it becomes a directory name.
var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// ParseEndpoint reads one --server-host or --client-hosts element:
// [NAME=]ENDPOINT, where ENDPOINT is unix:///path, tcp://host:port,
// ssh://[user@]host[:port] or the name of a Docker context. Without NAME
// the host is named after the endpoint's host part (the socket's directory
// for unix://). contextDir is where contexts live (~/.docker/contexts).
func ParseEndpoint(s, contextDir string) (Endpoint, error) {
	var e Endpoint
	name, rest, named := strings.Cut(s, "=")
	if !named || strings.Contains(name, "/") || strings.Contains(name, ":") {
		name, rest, named = "", s, false
	}
	if rest == "" {
		return e, fmt.Errorf("%w: empty host endpoint %q", fault.ErrConfig, s)
	}
	if !strings.Contains(rest, "://") {
		ctx, err := readContext(contextDir, rest)
		if err != nil {
			return e, err
		}
		e = ctx
	} else {
		e.Host = rest
	}
	u, err := url.Parse(e.Host)
	if err != nil {
		return e, fmt.Errorf("%w: host endpoint %q: %v", fault.ErrConfig, s, err)
	}
	switch u.Scheme {
	case "unix":
		if u.Path == "" {
			return e, fmt.Errorf("%w: host endpoint %q: unix:// needs a socket path", fault.ErrConfig, s)
		}
		if !named {
			name = filepath.Base(filepath.Dir(u.Path))
		}
	case "tcp", "ssh":
		if u.Hostname() == "" {
			return e, fmt.Errorf("%w: host endpoint %q: no host", fault.ErrConfig, s)
		}
		if !named {
			name = u.Hostname()
		}
	default:
		return e, fmt.Errorf("%w: host endpoint %q: want unix://, tcp://, ssh:// or a Docker context name", fault.ErrConfig, s)
	}
	if !named && e.Context != "" {
		name = e.Context
	}
	if !hostNameRE.MatchString(name) {
		return e, fmt.Errorf("%w: host name %q (from %q): want letters, digits, '.', '_' or '-'; name it with NAME=ENDPOINT", fault.ErrConfig, name, s)
	}
	e.Name = name
	return e, nil
}

// ParseEndpoints reads a comma-separated --client-hosts list; two hosts of
// the same name get -2, -3 … so that their bundle directories differ.
func ParseEndpoints(list, contextDir string) ([]Endpoint, error) {
	var out []Endpoint
	seen := map[string]int{}
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		e, err := ParseEndpoint(f, contextDir)
		if err != nil {
			return nil, err
		}
		seen[e.Name]++
		if n := seen[e.Name]; n > 1 {
			e.Name = fmt.Sprintf("%s-%d", e.Name, n)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --client-hosts %q names no host", fault.ErrConfig, list)
	}
	return out, nil
}

// DefaultContextDir is where the Docker CLI keeps contexts.
func DefaultContextDir() string {
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		return filepath.Join(d, "contexts")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".docker", "contexts")
}

// readContext reads a Docker context: meta/<sha256 of the name>/meta.json
// holds the endpoint, tls/<same>/docker/ the TLS material when it has any.
func readContext(dir, name string) (Endpoint, error) {
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	path := filepath.Join(dir, "meta", id, "meta.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%w: host %q is neither an endpoint (unix://, tcp://, ssh://) nor a Docker context: %v", fault.ErrConfig, name, err)
	}
	var meta struct {
		Name      string
		Endpoints map[string]struct {
			Host          string
			SkipTLSVerify bool
		}
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return Endpoint{}, fmt.Errorf("%w: Docker context %q: %s: %v", fault.ErrConfig, name, path, err)
	}
	ep, ok := meta.Endpoints["docker"]
	if !ok || ep.Host == "" {
		return Endpoint{}, fmt.Errorf("%w: Docker context %q has no docker endpoint (%s)", fault.ErrConfig, name, path)
	}
	e := Endpoint{Host: ep.Host, Context: name, tlsVerify: !ep.SkipTLSVerify}
	tls := filepath.Join(dir, "tls", id, "docker")
	if _, err := os.Stat(filepath.Join(tls, "ca.pem")); err == nil {
		e.TLSDir = tls
	}
	return e, nil
}

// Client connects to the endpoint. tcp:// takes its TLS material from a
// context, or from DOCKER_CERT_PATH and DOCKER_TLS_VERIFY as the Docker
// CLI does; ssh:// runs `ssh … docker system dial-stdio` on the host, the
// Docker CLI's own connection helper, so the remote side needs nothing
// but the Docker CLI and sshd.
func (e Endpoint) Client() (*client.Client, error) {
	var opts []client.Opt // the client negotiates the API version by itself
	switch {
	case e.local():
		opts = append(opts, client.FromEnv)
	case strings.HasPrefix(e.Host, "ssh://"):
		dial, err := sshDialer(e.Host)
		if err != nil {
			return nil, err
		}
		// The host part is never dialled: every connection is a new
		// dial-stdio over ssh.
		opts = append(opts, client.WithHost("http://docker.example.invalid"), client.WithDialContext(dial))
	default:
		opts = append(opts, client.WithHost(e.Host))
		if e.TLSDir != "" {
			opts = append(opts, client.WithTLSClientConfig(filepath.Join(e.TLSDir, "ca.pem"), filepath.Join(e.TLSDir, "cert.pem"), filepath.Join(e.TLSDir, "key.pem")))
		} else if strings.HasPrefix(e.Host, "tcp://") {
			opts = append(opts, client.WithTLSClientConfigFromEnv())
		}
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: docker client of host %s (%s): %w", e.Name, e.Display(), err)
	}
	return cli, nil
}

// Record is the endpoint as plan.json records it.
func (e Endpoint) Record() results.HostEndpoint {
	return results.HostEndpoint{Name: e.Name, Host: e.Host, Context: e.Context}
}

// EndpointRecords are the endpoints as plan.json records them.
func EndpointRecords(eps []Endpoint) []results.HostEndpoint {
	out := make([]results.HostEndpoint, len(eps))
	for i, e := range eps {
		out[i] = e.Record()
	}
	return out
}

// Display is the endpoint as progress lines show it.
func (e Endpoint) Display() string {
	if e.local() {
		return "the local engine"
	}
	return e.Host
}

// SshArgs turns ssh://[user@]host[:port] into ssh's arguments for
// `docker system dial-stdio` on that host.
func SshArgs(endpoint string) ([]string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: ssh endpoint %q: %v", fault.ErrConfig, endpoint, err)
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%w: ssh endpoint %q: want ssh://[user@]host[:port]", fault.ErrConfig, endpoint)
	}
	var args []string
	if u.User != nil {
		args = append(args, "-l", u.User.Username())
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	// -T: no terminal; -o BatchMode: never ask for a password mid-run.
	return append(args, "-T", "-o", "BatchMode=yes", "--", u.Hostname(), "docker", "system", "dial-stdio"), nil
}

func sshDialer(endpoint string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	args, err := SshArgs(endpoint)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialCommand(ctx, "ssh", args...)
	}, nil
}

// commandConn is a net.Conn over a child process's stdin and stdout.
type commandConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	once   sync.Once
}

// dialCommand starts name args and speaks through its stdio. The process
// lives until the connection is closed, not until ctx ends: ctx covers
// only the dial.
func dialCommand(ctx context.Context, name string, args ...string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("orchestrator: start %s: %w", name, err)
	}
	return &commandConn{cmd: cmd, stdin: stdin, stdout: stdout}, nil
}

func (c *commandConn) Read(p []byte) (int, error)  { return c.stdout.Read(p) }
func (c *commandConn) Write(p []byte) (int, error) { return c.stdin.Write(p) }

func (c *commandConn) Close() error {
	c.once.Do(func() {
		c.stdin.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	})
	return nil
}

type commandAddr string

func (a commandAddr) Network() string { return "stdio" }
func (a commandAddr) String() string  { return string(a) }

func (c *commandConn) LocalAddr() net.Addr                { return commandAddr("local") }
func (c *commandConn) RemoteAddr() net.Addr               { return commandAddr(c.cmd.Path) }
func (c *commandConn) SetDeadline(t time.Time) error      { return nil }
func (c *commandConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *commandConn) SetWriteDeadline(t time.Time) error { return nil }
