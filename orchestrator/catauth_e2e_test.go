package orchestrator

import (
	"archive/tar"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/shell"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// waitListening waits, up to 120 s, until started gives the argv of the
// run's server (what) with --port and the port answers on 127.0.0.1, and
// returns that argv and address.
func (b *background) waitListening(t *testing.T, what string, started func() []string) (argv []string, addr string) {
	t.Helper()
	b.waitUntil(t, what+" listening", 120*time.Second, func() bool {
		if argv = started(); !slices.Contains(argv, "--port") {
			return false
		}
		addr = net.JoinHostPort("127.0.0.1", argv[slices.Index(argv, "--port")+1])
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return argv, addr
}

// checkPasswordHeld: the server at addr answers each of cmds without the
// password with -NOAUTH, and PING with it with +PONG.
func checkPasswordHeld(t *testing.T, addr, pw string, cmds ...string) {
	t.Helper()
	for _, cmd := range cmds {
		if got := respLine(t, addr, "", cmd); !strings.HasPrefix(got, "-NOAUTH") {
			t.Errorf("%s without the password at %s: got %q, want -NOAUTH", cmd, addr, got)
		}
	}
	if got := respLine(t, addr, pw, "PING"); got != "+PONG" {
		t.Errorf("PING with the password at %s: got %q, want +PONG", addr, got)
	}
}

// checkNoCommandLineHolds: no process of the host has pw in its argv.
func checkNoCommandLineHolds(t *testing.T, pw string) {
	t.Helper()
	for p, a := range cmdlines() {
		if strings.Contains(strings.Join(a, " "), pw) {
			t.Errorf("the run's password is on the command line of pid %s: %q", p, a)
		}
	}
}

// cmdlines are the argv of every process of the host that /proc lists,
// by pid.
func cmdlines() map[string][]string {
	out := map[string][]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		out[e.Name()] = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}
	return out
}

var requirepassLine = regexp.MustCompile(`^requirepass "([0-9a-f]{32})"\n$`)

// respLine sends one inline command to addr without AUTH unless auth is
// given first, and returns the reply's first line to the last command.
func respLine(t *testing.T, addr, auth string, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial the run's redis-server at %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(c)
	if auth != "" {
		fmt.Fprintf(c, "AUTH %s\r\n", auth)
		if l, _ := rd.ReadString('\n'); l != "+OK\r\n" {
			t.Fatalf("AUTH with the run's password at %s: got %q, want +OK", addr, l)
		}
	}
	fmt.Fprintf(c, "%s\r\n", cmd)
	l, _ := rd.ReadString('\n')
	return strings.TrimSpace(l)
}

// checkCatalogueAuth runs args (a --server redis run) in the background
// and, while it holds its redis-server, proves that the server refuses a
// connection without the password (NOAUTH for FLUSHALL, CONFIG SET,
// CLIENT PAUSE) and takes the password read back from the file the server
// reads (readConf), and that the password is on no process's command line
// nor in the argv redis-server was started with (started: redis-server
// rewrites its /proc cmdline to a title, so the argv is taken where it was
// given); once the run ended well, that it is in no file of the bundle or
// the state dir.
func checkCatalogueAuth(t *testing.T, bin, out, state string, args []string, started func() []string, readConf func(t *testing.T, argv []string) []byte) {
	b := startBackground(t, bin, args...)
	argv, addr := b.waitListening(t, "the run's redis-server", started)
	conf := readConf(t, argv)
	m := requirepassLine.FindSubmatch(conf)
	if m == nil {
		t.Fatalf("the config file redis-server reads (its first argument %s): got %q, want one requirepass line", argv[0], conf)
	}
	pw := string(m[1])
	if strings.Contains(strings.Join(argv, " "), pw) {
		t.Errorf("redis-server was started with the run's password in its argv: %q", argv)
	}
	checkPasswordHeld(t, addr, pw, "FLUSHALL", "CONFIG SET maxmemory 1", "CLIENT PAUSE 5000", "PING")
	checkNoCommandLineHolds(t, pw)
	b.waitExitOK(t)
	if !strings.Contains(b.stderr.String(), "servers: a password made for this run") {
		t.Errorf("stderr: got\n%s\nwant the line saying the servers got a password", b.stderr.String())
	}
	for _, dir := range []string{out, state} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(pw)) {
				t.Errorf("%s holds the run's password after the run", p)
			}
			return nil
		})
	}
	recs, loads, _ := results.ReadCells(out)
	if len(recs) == 0 {
		t.Errorf("cells.jsonl in %s: no pass recorded, want the redis row measured with the password", out)
	}
	// The command the bundle records ends with the argv redis-server was
	// given, its config file first: what ran.
	for _, l := range loads {
		words, err := shell.Fields(l.ServerCommand, func(string) string { return "" })
		if err != nil || len(words) < len(argv) || !slices.Equal(words[len(words)-len(argv):], argv) {
			t.Errorf("recorded command %q (%v): want it to end with the argv redis-server was started with, %q", l.ServerCommand, err, argv)
		}
	}
}

// TestRunRedisProcessRefusesNoAuth: --server redis under the process
// runtime gets the run's password from a 0600 config file in the run's
// secret dir, given as redis-server's first argument. --server-bin is a
// script named redis-server that writes down its argv and execs the real
// one.
func TestRunRedisProcessRefusesNoAuth(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustLookPath(t, "redis-server")
	base := testenv.MustDiskDir(t)
	state := filepath.Join(base, "state")
	wrap, argvFile := filepath.Join(t.TempDir(), "redis-server"), filepath.Join(t.TempDir(), "argv")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %s.tmp && mv %s.tmp %s\nexec %s \"$@\"\n", argvFile, argvFile, argvFile, redis)
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := scenarioArgs(base, results.ScenarioMemory, "--server", "redis", "--server-bin", wrap, "--passes", "3", "--cell-seconds", "2")
	started := func() []string {
		b, err := os.ReadFile(argvFile)
		if err != nil {
			return nil
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	checkCatalogueAuth(t, bin, filepath.Join(base, "out"), state, args, started, func(t *testing.T, argv []string) []byte {
		if !strings.HasPrefix(argv[0], state+"/") || !strings.HasSuffix(argv[0], ".conf") {
			t.Fatalf("redis-server: got argv %q, want its first argument a config file under %s", argv, state)
		}
		st, err := os.Lstat(argv[0])
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("the config file %s: got %v, %v; want a regular 0600 file", argv[0], st.Mode(), err)
		}
		conf, err := os.ReadFile(argv[0])
		if err != nil {
			t.Fatal(err)
		}
		return conf
	})
	if _, err := os.Stat(started()[0]); err == nil {
		t.Errorf("the config file %s is left after the run, want it removed with the run's secrets", started()[0])
	}
}

// TestRunRedisDockerRefusesNoAuth: the same under the Docker runtime, the
// config file copied into the container (read back with docker cp), the
// argv the container's as the engine records it. The file belongs to the
// user the image runs as: root for the test's redis image, and uid 4242
// for the same image with USER 4242:4243, whose redis-server could not
// read a 0400 file of root's and would not start (as Garnet's image, which
// runs as a user of its own, would not).
func TestRunRedisDockerRefusesNoAuth(t *testing.T) {
	root := testenv.MustRedisImage(t)
	for _, c := range []struct {
		name     string
		user     string
		uid, gid int
	}{
		{"root", "", 0, 0},
		{"user 4242", "4242:4243", 4242, 4243},
	} {
		t.Run(c.name, func(t *testing.T) {
			image := root
			if c.user != "" {
				image = testenv.MustImageAsUser(t, root, c.user)
			}
			checkRedisDockerAuth(t, image, c.uid, c.gid)
		})
	}
}

func checkRedisDockerAuth(t *testing.T, image string, uid, gid int) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	state := filepath.Join(base, "state")
	args := scenarioArgs(base, results.ScenarioMemory, "--server", "redis", "--runtime", "docker", "--server-image", image, "--passes", "3", "--cell-seconds", "2")
	var id string
	started := func() []string {
		ids, _ := exec.Command("docker", "ps", "-q", "--no-trunc", "--filter", "ancestor="+image).Output()
		if id = strings.TrimSpace(string(ids)); id == "" || strings.Contains(id, "\n") {
			return nil
		}
		raw, _ := exec.Command("docker", "inspect", "--format", "{{join .Args \"\\n\"}}", id).Output()
		return strings.Split(strings.TrimSpace(string(raw)), "\n")
	}
	checkCatalogueAuth(t, bin, filepath.Join(base, "out"), state, args, started, func(t *testing.T, argv []string) []byte {
		if !strings.HasSuffix(argv[0], ".conf") {
			t.Fatalf("redis-server: got container args %q, want the first a config file", argv)
		}
		raw, err := exec.Command("docker", "cp", id+":"+argv[0], "-").Output()
		if err != nil {
			t.Fatalf("docker cp %s:%s: %v", id, argv[0], err)
		}
		tr := tar.NewReader(bytes.NewReader(raw))
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode&0o077 != 0 || h.Uid != uid || h.Gid != gid {
			t.Errorf("the config file in the container: mode %o, owner %d:%d; want none for group and others, owned by %d:%d", h.Mode, h.Uid, h.Gid, uid, gid)
		}
		conf, _ := io.ReadAll(tr)
		return conf
	})
}

// TestRunShardsRefuseNoAuth: each shard of a --shards 2 run takes the
// run's password from --auth-file, refuses a client without it (NOAUTH,
// also for CLUSTER SLOTS, the map a stranger would read first) while the
// run's clients, which AUTH on every node, measure them; the password is
// on no command line and in no file of the bundle.
func TestRunShardsRefuseNoAuth(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	out, state := filepath.Join(base, "out"), filepath.Join(base, "state")
	args := []string{"run", "--profile", "quick", "--shards", "2", "--backends", "uring", "--pin", "none", "--runtime", "process",
		"--dbsize", "400000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2", "--batch", "64", "--cell-seconds", "2", "--passes", "3", "--warmup-seconds", "0",
		"--load-threads", "4", "--no-fio", "--data", filepath.Join(base, "data"), "--out", out, "--state-dir", state}
	b := startBackground(t, bin, args...)
	var shards [][]string
	b.waitUntil(t, "two shards listening", 120*time.Second, func() bool {
		shards = nil
		for _, a := range cmdlines() {
			if slices.Contains(a, "--cluster-node-id") && slices.Contains(a, "--port") && slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, state+"/") }) {
				shards = append(shards, a)
			}
		}
		if len(shards) != 2 {
			return false
		}
		for _, a := range shards {
			c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", a[slices.Index(a, "--port")+1]))
			if err != nil {
				return false
			}
			c.Close()
		}
		return true
	})
	var pw string
	for _, a := range shards {
		i := slices.Index(a, "--auth-file")
		if i < 0 || !strings.HasPrefix(a[i+1], state+"/") {
			t.Fatalf("a shard's command line: got %q, want --auth-file naming a file of %s", a, state)
		}
		raw, err := os.ReadFile(a[i+1])
		if err != nil {
			t.Fatal(err)
		}
		pw = strings.TrimSpace(string(raw))
		addr := net.JoinHostPort("127.0.0.1", a[slices.Index(a, "--port")+1])
		for _, cmd := range []string{"CLUSTER SLOTS", "FLUSHALL", "PING"} {
			if got := respLine(t, addr, "", cmd); !strings.HasPrefix(got, "-NOAUTH") {
				t.Errorf("%s without the password at shard %s: got %q, want -NOAUTH", cmd, addr, got)
			}
		}
		if got := respLine(t, addr, pw, "PING"); got != "+PONG" {
			t.Errorf("PING with the password at shard %s: got %q, want +PONG", addr, got)
		}
	}
	if len(pw) != 32 {
		t.Fatalf("the run's password file holds %d bytes, want 32 hex digits", len(pw))
	}
	checkNoCommandLineHolds(t, pw)
	b.waitExitOK(t)
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(p, filepath.Join(base, "data")) {
			return nil
		}
		if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(pw)) {
			t.Errorf("%s holds the run's password after the run", p)
		}
		return nil
	})
	if recs, _, _ := results.ReadCells(out); len(recs) != 3 {
		t.Errorf("cells.jsonl: got %d passes, want 3, measured through the password", len(recs))
	}
}

// TestRunServerCmdPasswordFile: a --server-cmd template that names
// {password_file} gets the run's password file there (0600, under the
// state dir): the server refuses a client without the password, the run
// measures it with it, the password is on no command line and in no file
// of the bundle, and the run does not warn that it runs without one. The
// server is tierbench's own under another name, reading the file with
// --requirepass-file.
func TestRunServerCmdPasswordFile(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	out, state := filepath.Join(base, "out"), filepath.Join(base, "state")
	kvd := filepath.Join(t.TempDir(), "kvd")
	copyFile(t, bin, kvd, 0o755)
	tmpl := kvd + " server --port {port} --bind {bind} --requirepass-file {password_file}"
	b := startBackground(t, bin, scenarioArgs(base, results.ScenarioMemory, "--server-cmd", tmpl, "--passes", "3", "--cell-seconds", "2")...)
	argv, addr := b.waitListening(t, "kvd", func() []string {
		for _, a := range cmdlines() {
			if len(a) > 0 && a[0] == kvd {
				return a
			}
		}
		return nil
	})
	file := argv[slices.Index(argv, "--requirepass-file")+1]
	st, err := os.Lstat(file)
	if err != nil || !strings.HasPrefix(file, state+"/") || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("{password_file}: got %s (%v, %v), want a regular 0600 file under %s", file, st, err, state)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSuffix(string(raw), "\n")
	if len(pw) < 16 || strings.Contains(pw, "\n") {
		t.Fatalf("the password file holds %q, want one line of a random password", raw)
	}
	checkPasswordHeld(t, addr, pw, "FLUSHALL", "PING")
	checkNoCommandLineHolds(t, pw)
	b.waitExitOK(t)
	if strings.Contains(b.stderr.String(), "runs without a password") {
		t.Errorf("stderr: got\n%s\nwant no warning that cmd runs without a password", b.stderr.String())
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("the password file %s is left after the run", file)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(pw)) {
				t.Errorf("%s holds the run's password", p)
			}
		}
		return nil
	})
	if recs, _, _ := results.ReadCells(out); len(recs) == 0 {
		t.Errorf("cells.jsonl in %s: no pass recorded, want the cmd row measured with the password", out)
	}
}
