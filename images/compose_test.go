package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/internal/testenv"
)

// composeCLI is how this machine runs compose: the docker CLI's plugin
// ("docker compose") or the standalone docker-compose; nil when neither.
func composeCLI() []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	return nil
}

// composeMemlock is the RLIMIT_MEMLOCK the test asks for (TIERBENCH_MEMLOCK):
// 8 MiB, what Linux gives a process by default and what an engine that
// may not raise it (this project's test machines run one) can still set.
const composeMemlock = 8 << 20

// composeDBSize is 20 × the server's --memory 16m in 128 B records: at
// most 1/20 of the keys are in memory, so a GET reads the device.
const composeDBSize = 2_700_000

// TestComposeServerUnprivileged runs compose.yaml as docs/servers.md says,
// on the root Dockerfile and a static binary, for each backend, and uring
// once more with images/compose.io_uring.yaml (no seccomp filter): the server's
// container is not root, not privileged, drops every capability but
// SYS_NICE, holds none itself, takes the memlock limit it is given and
// writes its segment files as its own user into a data dir that user
// owns; the client loads the keys through it and its GETs read the
// device (/proc/<pid>/io of the server: at least 90 % of a 512 B sector
// per GET, the run's memory-served bar).
func TestComposeServerUnprivileged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and loads 2.7 M keys through compose")
	}
	cli := testenv.MustDocker(t)
	compose := composeCLI()
	if compose == nil {
		t.Skip("no compose CLI on this machine (docker compose or docker-compose)")
	}
	bin := testenv.MustBinary(t)
	root := testenv.RepoRoot(t)

	// The repository's files as a user has them, and the binary built
	// beside them, in a project directory of the test's own.
	project := t.TempDir()
	for _, f := range []string{"compose.yaml", "Dockerfile", ".dockerignore", filepath.Join("images", "compose.io_uring.yaml")} {
		copyFile(t, filepath.Join(root, f), filepath.Join(project, f), 0o644)
	}
	copyFile(t, bin, filepath.Join(project, BinaryName), 0o755)

	uid, gid := 65534, 65534
	if os.Getuid() != 0 {
		uid, gid = os.Getuid(), os.Getgid() // a data dir of our own
	}
	serverCPUs, clientCPUs := "0", "1"
	if runtime.NumCPU() < 2 {
		clientCPUs = "0"
	}
	name := fmt.Sprintf("tbcompose%d", os.Getpid())
	env := func(data string, port int, backend string) []string {
		return append(os.Environ(),
			"TIERBENCH_DATA="+data, "TIERBENCH_UID="+strconv.Itoa(uid), "TIERBENCH_GID="+strconv.Itoa(gid),
			"TIERBENCH_PORT="+strconv.Itoa(port), "TIERBENCH_BACKEND="+backend, "TIERBENCH_INDEX=64m",
			"TIERBENCH_DBSIZE="+strconv.Itoa(composeDBSize), "TIERBENCH_LOAD_THREADS=4", "TIERBENCH_THREADS=4",
			"TIERBENCH_CELL_SECONDS=3", "TIERBENCH_MEMLOCK="+strconv.Itoa(composeMemlock),
			"SERVER_CPUS="+serverCPUs, "CLIENT_CPUS="+clientCPUs, "SERVER_MEMS=0", "CLIENT_MEMS=0")
	}
	run := func(env []string, files []string, timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		head := append(slices.Clone(compose[1:]), "-p", name)
		for _, f := range files {
			head = append(head, "-f", f)
		}
		cmd := exec.CommandContext(ctx, compose[0], append(head, args...)...)
		cmd.Dir, cmd.Env = project, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if out, err := run(os.Environ(), nil, 2*time.Minute, "down", "--volumes", "--rmi", "all"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})

	tests := []struct {
		name, backend string
		files         []string // compose files; none: compose.yaml alone
		security      []string // the server's security options
	}{
		{"libaio", "libaio", nil, []string{"no-new-privileges:true"}},
		{"uring", "uring", nil, []string{"no-new-privileges:true"}},
		{"uring without seccomp", "uring", []string{"compose.yaml", filepath.Join("images", "compose.io_uring.yaml")}, []string{"no-new-privileges:true", "seccomp=unconfined"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := testenv.MustDiskDir(t)
			if err := os.Chown(data, uid, gid); err != nil {
				t.Fatal(err)
			}
			env := env(data, testenv.FreePort(t), tt.backend)
			run := func(timeout time.Duration, args ...string) (string, error) {
				return run(env, tt.files, timeout, args...)
			}
			up := []string{"up", "-d", "server"}
			if i == 0 {
				up = []string{"up", "-d", "--build", "server"}
			}
			if out, err := run(5*time.Minute, up...); err != nil {
				t.Fatalf("compose %s: %v\n%s", strings.Join(up, " "), err, out)
			}
			t.Cleanup(func() {
				if out, err := run(2*time.Minute, "rm", "-s", "-f", "server"); err != nil {
					t.Errorf("compose rm server: %v\n%s", err, out)
				}
			})
			out, err := run(time.Minute, "ps", "-q", "server")
			id := strings.TrimSpace(out)
			if err != nil || id == "" {
				t.Fatalf("compose ps -q server: %q, %v", out, err)
			}
			// What the engine was asked for first: a server that cannot
			// start as asked should be named so, not as unhealthy.
			assertUnprivileged(t, cli, id, tt.security)
			pid := waitHealthy(t, cli, id)
			assertProcess(t, pid, uid)

			before := readBytes(t, pid)
			out, err = run(5*time.Minute, "run", "--rm", "client")
			if err != nil {
				t.Fatalf("compose run client: %v\n%s", err, out)
			}
			read := readBytes(t, pid) - before
			gets, misses := getsOf(t, out)
			if misses != 0 || gets == 0 {
				t.Fatalf("client: %d GETs, %d misses; want GETs and no miss:\n%s", gets, misses, out)
			}
			if perGet := float64(read) / float64(gets); perGet < 0.9*512 {
				t.Errorf("server read %d B from its device for %d GETs, %.0f B per GET; want at least 461 (90 %% of a 512 B sector)", read, gets, perGet)
			} else {
				t.Logf("%s: %d GETs read %d B from the device through the non-root server, %.0f B per GET", tt.name, gets, read, perGet)
			}
			segments, _ := filepath.Glob(filepath.Join(data, "segment.*"))
			if len(segments) == 0 {
				t.Fatalf("no segment file in the data dir %s", data)
			}
			for _, s := range segments {
				if owner := fileUID(t, s); owner != uid {
					t.Errorf("%s: owned by uid %d, want the server's %d", s, owner, uid)
				}
			}
		})
	}
}

// waitHealthy waits up to 2 minutes for the container's health check to
// pass and returns its process's pid on the host.
func waitHealthy(t *testing.T, cli *client.Client, id string) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		in, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := in.Container.State
		if st.Health != nil && st.Health.Status == "healthy" {
			return st.Pid
		}
		if !st.Running || time.Now().After(deadline) {
			t.Fatalf("server container: running %v, health %+v; want it healthy within 2 minutes", st.Running, st.Health)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// assertUnprivileged checks the server's container as the engine has it.
func assertUnprivileged(t *testing.T, cli *client.Client, id string, security []string) {
	t.Helper()
	in, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, hc := in.Container.Config, in.Container.HostConfig
	if c.User == "" || c.User == "0" || c.User == "root" || strings.HasPrefix(c.User, "0:") {
		t.Errorf("server container's user: got %q, want a non-root uid", c.User)
	}
	if hc.Privileged {
		t.Errorf("server container: got privileged, want not")
	}
	if got := hc.CapDrop; !slices.Contains(got, "ALL") {
		t.Errorf("server container's dropped capabilities: got %q, want ALL", got)
	}
	if got := hc.CapAdd; len(got) != 1 || strings.TrimPrefix(got[0], "CAP_") != "SYS_NICE" {
		t.Errorf("server container's added capabilities: got %q, want SYS_NICE alone", got)
	}
	if got := slices.Sorted(slices.Values(hc.SecurityOpt)); !slices.Equal(got, security) {
		t.Errorf("server container's security options: got %q, want %q", got, security)
	}
	var memlock int64 = -2
	for _, u := range hc.Ulimits {
		if u.Name == "memlock" {
			memlock = u.Hard
		}
	}
	if memlock != composeMemlock {
		t.Errorf("server container's memlock limit: got %d, want TIERBENCH_MEMLOCK's %d", memlock, composeMemlock)
	}
}

// assertProcess checks the server's process as the kernel has it: its
// uid is the one asked for, and it holds no capability.
func assertProcess(t *testing.T, pid, uid int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := statusFields(string(status))
	if want := fmt.Sprintf("%d\t%d\t%d\t%d", uid, uid, uid, uid); fields["Uid"] != want {
		t.Errorf("server process %d: Uid %q, want %q", pid, fields["Uid"], want)
	}
	if fields["CapEff"] != "0000000000000000" || fields["CapPrm"] != "0000000000000000" {
		t.Errorf("server process %d: CapEff %s CapPrm %s, want no capability", pid, fields["CapEff"], fields["CapPrm"])
	}
}

// statusFields are /proc/<pid>/status's "Name:\tvalue" lines by name.
func statusFields(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// readBytes is read_bytes of /proc/<pid>/io: what the process read from
// storage, the page cache aside.
func readBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(statusFields(string(b))["read_bytes"], 10, 64)
	if err != nil {
		t.Fatalf("/proc/%d/io: %v\n%s", pid, err, b)
	}
	return v
}

var (
	getTotal = regexp.MustCompile(`Operation type: GET[^\n]*\n\[Total time\]: [0-9.]+ ms for (\d+) ops`)
	hits     = regexp.MustCompile(`\[Hits\]: (\d+) \[Misses\]: (\d+)`)
)

// getsOf reads the GETs and misses of the client's GET phase from its
// output.
func getsOf(t *testing.T, out string) (gets, misses int64) {
	t.Helper()
	g, h := getTotal.FindStringSubmatch(out), hits.FindStringSubmatch(out)
	if g == nil || h == nil {
		t.Fatalf("client output has no GET phase total or hits:\n%s", out)
	}
	gets, _ = strconv.ParseInt(g[1], 10, 64)
	misses, _ = strconv.ParseInt(h[2], 10, 64)
	return gets, misses
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// fileUID is the owner of the file at path.
func fileUID(t *testing.T, path string) int {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}
