package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// Hosts made by MustHosts are network namespaces joined by veth pairs to
// the first one, each running a Docker engine of its own: a "machine"
// whose containers (on the host network) see only that namespace's
// interfaces. Every address belongs to a namespace the test made
// (10.231.0.0/24), so no traffic leaves them. Engines share this machine's
// kernel, filesystem and PID space; only the network is apart.

// hostSubnet is the /24 the test hosts' addresses come from; host i (0-based)
// has hostSubnet.(i+1).
const hostSubnet = "10.231.0."

// dockerTCPPort is where a host started with TCP listens inside its namespace.
const dockerTCPPort = 2375

// Host is one test host: a network namespace with its own dockerd.
type Host struct {
	Name   string // "a", "b", …
	NetNS  string // the namespace's name (ip netns), unique per test
	Addr   string // its address on the veth, e.g. 10.231.0.1
	Socket string // the engine's endpoint: unix:///run/tbdocker-…/docker.sock
	// TCP is the engine's plain-TCP endpoint inside the namespace
	// (tcp://10.231.0.2:2375) when asked for, else "". Only processes in a
	// joined namespace reach it (see NetNSPath and Nsenter).
	TCP string

	dataRoot, execRoot, pidFile, config string
	cmd                                 *exec.Cmd
	exited                              <-chan struct{} // closed when dockerd exits
}

// NetNSPath is the namespace's file, for nsenter --net.
func (h *Host) NetNSPath() string { return "/var/run/netns/" + h.NetNS }

// Nsenter returns a command that runs name with args inside the host's
// network namespace (nsenter, not `ip netns exec`, which remounts /sys).
func (h *Host) Nsenter(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + h.NetNSPath(), "--", name}, args...)...)
}

// Client returns a Docker API client of the host's engine over its unix
// socket, closed when the test ends.
func (h *Host) Client(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.New(client.WithHost(h.Socket))
	if err != nil {
		t.Fatalf("testenv: docker client of host %s: %v", h.Name, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// HostsOptions says what MustHosts makes.
type HostsOptions struct {
	// TCP lists the hosts (by index) whose engine also listens on plain
	// TCP at its veth address.
	TCP []int
}

// MustHosts makes n hosts "a", "b", … (2 ≤ n ≤ 8) with an engine each, the
// first joined to every other by a veth pair, and tears everything down
// when the test ends, whatever happened: each dockerd stopped through its
// pid file, its netns bind mount unmounted, its directories removed, the
// namespaces (and with them the veths) deleted. It skips the test only
// when the kernel refuses network namespaces here or TIERBENCH_NO_DOCKER=1.
func MustHosts(t testing.TB, n int, opt HostsOptions) []*Host {
	t.Helper()
	if n < 2 || n > 8 {
		t.Fatalf("testenv: MustHosts(%d): want 2 to 8 hosts", n)
	}
	if os.Getenv(NoDockerEnv) == "1" {
		t.Skipf("testenv: %s=1: no Docker engines for the test hosts", NoDockerEnv)
	}
	for _, prog := range []string{"ip", "nsenter", "dockerd", "fuse-overlayfs"} {
		MustLookPath(t, prog)
	}
	var b [3]byte
	rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	hosts := make([]*Host, n)
	for i := range hosts {
		name := string(rune('a' + i))
		h := &Host{
			Name: name, NetNS: "tbhost-" + suffix + "-" + name, Addr: hostSubnet + strconv.Itoa(i+1),
			dataRoot: "/var/lib/tbdocker-" + suffix + "-" + name,
			execRoot: "/run/tbdocker-" + suffix + "-" + name,
		}
		h.Socket = "unix://" + filepath.Join(h.execRoot, "docker.sock")
		h.pidFile = filepath.Join(h.execRoot, "docker.pid")
		h.config = h.execRoot + ".json"
		hosts[i] = h
	}
	t.Cleanup(func() { teardownHosts(t, hosts) })

	if out, err := exec.Command("ip", "netns", "add", hosts[0].NetNS).CombinedOutput(); err != nil {
		if strings.Contains(string(out), "Operation not permitted") || strings.Contains(string(out), "Permission denied") {
			t.Skipf("testenv: the kernel refuses network namespaces here (ip netns add: %s)", strings.TrimSpace(string(out)))
		}
		t.Fatalf("testenv: ip netns add %s: %v: %s", hosts[0].NetNS, err, out)
	}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("testenv: ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	in := func(h *Host, args ...string) { t.Helper(); ip(append([]string{"-n", h.NetNS}, args...)...) }
	in(hosts[0], "link", "set", "lo", "up")
	for _, h := range hosts[1:] {
		ip("netns", "add", h.NetNS)
		in(h, "link", "set", "lo", "up")
		// Interface names are at most 15 bytes: tbv<suffix><host><side>.
		ifA, ifB := "tbv"+suffix+h.Name+"0", "tbv"+suffix+h.Name+"1"
		ip("link", "add", ifA, "netns", hosts[0].NetNS, "type", "veth", "peer", "name", ifB, "netns", h.NetNS)
		// The first host has its own address on every link (a /32 each,
		// with a route to the peer), so every peer reaches it at .1.
		in(hosts[0], "addr", "add", hosts[0].Addr+"/32", "dev", ifA)
		in(hosts[0], "link", "set", ifA, "up")
		in(hosts[0], "route", "add", h.Addr+"/32", "dev", ifA, "src", hosts[0].Addr)
		in(h, "addr", "add", h.Addr+"/32", "dev", ifB)
		in(h, "link", "set", ifB, "up")
		in(h, "route", "add", hosts[0].Addr+"/32", "dev", ifB, "src", h.Addr)
	}
	for i, h := range hosts {
		tcp := false
		for _, j := range opt.TCP {
			tcp = tcp || i == j
		}
		startEngine(t, h, tcp)
	}
	for _, h := range hosts {
		waitEngine(t, h)
	}
	return hosts
}

// startEngine starts dockerd in the host's namespace with a data root,
// exec root, socket and pid file of its own, the storage driver the
// machine's engine uses in sandboxes (fuse-overlayfs), and no bridge or
// iptables rules: containers use the host network.
func startEngine(t testing.TB, h *Host, tcp bool) {
	t.Helper()
	for _, d := range []string{h.dataRoot, h.execRoot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("testenv: host %s: %v", h.Name, err)
		}
	}
	conf := fmt.Sprintf(`{"data-root": %q, "storage-driver": "fuse-overlayfs"}`, h.dataRoot)
	if err := os.WriteFile(h.config, []byte(conf), 0o600); err != nil {
		t.Fatalf("testenv: host %s: %v", h.Name, err)
	}
	args := []string{"--config-file", h.config, "--exec-root", h.execRoot, "--pidfile", h.pidFile,
		"-H", h.Socket, "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false"}
	if tcp {
		h.TCP = fmt.Sprintf("tcp://%s:%d", h.Addr, dockerTCPPort)
		args = append(args, "-H", h.TCP, "--tls=false")
	}
	h.cmd = h.Nsenter("dockerd", args...)
	logf, err := os.Create(h.execRoot + ".log")
	if err != nil {
		t.Fatalf("testenv: host %s: %v", h.Name, err)
	}
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited, err := startHeld(h.cmd) // reaps it; teardown waits on the pid
	logf.Close()
	if err != nil {
		t.Fatalf("testenv: host %s: start dockerd: %v", h.Name, err)
	}
	h.exited = exited
}

func waitEngine(t testing.TB, h *Host) {
	t.Helper()
	cli, err := client.New(client.WithHost(h.Socket))
	if err != nil {
		t.Fatalf("testenv: host %s: %v", h.Name, err)
	}
	defer cli.Close()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, last = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		cancel()
		if last == nil {
			return
		}
		select {
		case <-h.exited:
			deadline = time.Now() // it died: say why
		case <-time.After(100 * time.Millisecond):
		}
	}
	log, _ := os.ReadFile(h.execRoot + ".log")
	t.Fatalf("testenv: host %s: dockerd at %s never answered: %v\n%s", h.Name, h.Socket, last, tail(log, 2000))
}

// teardownHosts removes everything MustHosts made, in reverse, reporting
// what it could not remove.
func teardownHosts(t testing.TB, hosts []*Host) {
	t.Helper()
	var errs []error
	for _, h := range hosts {
		errs = append(errs, stopEngine(h))
	}
	for _, h := range hosts {
		// dockerd bind-mounts its namespace here; a killed one leaves it.
		nsMount := filepath.Join(h.execRoot, "netns", "default")
		syscall.Unmount(nsMount, syscall.MNT_DETACH)
		unmountUnder(h.dataRoot)
		unmountUnder(h.execRoot)
		for _, p := range []string{h.execRoot, h.dataRoot, h.config, h.execRoot + ".log"} {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
			}
		}
	}
	for _, h := range hosts {
		// Deleting a namespace deletes the veth ends inside it.
		if out, err := exec.Command("ip", "netns", "del", h.NetNS).CombinedOutput(); err != nil &&
			!strings.Contains(string(out), "No such file") {
			errs = append(errs, fmt.Errorf("ip netns del %s: %v: %s", h.NetNS, err, out))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("testenv: tearing the test hosts down: %v", err)
	}
}

// stopEngine stops a host's dockerd by its pid file: SIGTERM, 20 s, SIGKILL.
func stopEngine(h *Host) error {
	pid := 0
	if b, err := os.ReadFile(h.pidFile); err == nil {
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 && h.cmd != nil && h.cmd.Process != nil {
		pid = h.cmd.Process.Pid // it died or never wrote the file
	}
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return nil // gone already
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	return fmt.Errorf("dockerd of host %s (pid %d) ignored SIGTERM for 20 s and was killed", h.Name, pid)
}

// unmountUnder detaches every mount point below dir, deepest first
// (overlay layers of containers an engine died holding).
func unmountUnder(dir string) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var points []string
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && (f[1] == dir || strings.HasPrefix(f[1], dir+"/")) {
			points = append(points, f[1])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		syscall.Unmount(points[i], syscall.MNT_DETACH)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}
