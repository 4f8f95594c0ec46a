package orchestrator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/results"
)

// These tests drive `tierbench run` through the real binary against real
// servers (redis-server, tierbench server) and check that it refuses to
// publish what it cannot defend. Datasets are 10 000–200 000 keys and
// cells 1 s, so each run takes seconds.

// externalArgs runs one small cell against a server at addr.
func externalArgs(base, name, addr string, extra ...string) []string {
	return append([]string{"run", "--server-addr", addr, "--keylength", "16", "--valuelength", "96",
		"--threads", "2", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "0", "--no-fio",
		"--load-threads", "4", "--out", filepath.Join(base, name), "--state-dir", filepath.Join(base, "state")}, extra...)
}

// respDo sends one command on a fresh connection and returns the reply
// (from a cleanup too, whose test context is already cancelled).
func respDo(t *testing.T, addr string, args ...string) any {
	t.Helper()
	c, err := rig.DialRESP(context.Background(), addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%s on %s: %v", strings.Join(args, " "), addr, err)
	}
	return v
}

// loadKeys loads keys 0..n-1 with the real loader.
func loadKeys(t *testing.T, bin string, port, n int) {
	t.Helper()
	r := runBinary(t, bin, "bench", "--port", strconv.Itoa(port), "--dbsize", strconv.Itoa(n), "--keylength", "16", "--valuelength", "96", "--runtime", "0", "--json")
	if r.code != 0 {
		t.Fatalf("loading %d keys: exit %d: %s", n, r.code, r.stderr)
	}
}

// TestRunRefusesPartialLoads refuses 99.9 %, 99.99 % and dbsize − 1 keys,
// both when the server was loaded before (--skip-load) and when the run's
// own load falls short: a Redis ACL that denies the default user the last
// keys makes their SETs fail, as a server that drops writes would.
func TestRunRefusesPartialLoads(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustRedisServer(t)
	base := testenv.MustDiskDir(t)
	pid := strconv.Itoa(redis.Cmd.Process.Pid)
	const dbsize = 100_000
	cases := []struct {
		name    string
		missing int
		deny    []string // ACL key patterns granting every key but the missing ones
		share   string
	}{
		{"99.9 %", 100, []string{"00000000000[0-8]????", "000000000009[0-8]???", "0000000000099[0-8]??"}, "99.90 %"},
		{"99.99 %", 10, []string{"00000000000[0-8]????", "000000000009[0-8]???", "0000000000099[0-8]??", "00000000000999[0-8]?"}, "99.99 %"},
		{"dbsize - 1", 1, []string{"00000000000[0-8]????", "000000000009[0-8]???", "0000000000099[0-8]??", "00000000000999[0-8]?", "000000000009999[0-8]"}, "99.999 %"},
	}
	for _, tc := range cases {
		held := dbsize - tc.missing
		t.Run("skip-load "+tc.name, func(t *testing.T) {
			respDo(t, redis.Addr, "FLUSHALL")
			loadKeys(t, bin, redis.Port, held)
			r := runBinary(t, bin, externalArgs(base, "skip-"+strconv.Itoa(tc.missing), redis.Addr, "--server-pid", pid, "--skip-load", "--dbsize", strconv.Itoa(dbsize))...)
			want := fmt.Sprintf("the server holds %d keys, %d fewer than --dbsize %d (%s)", held, tc.missing, dbsize, tc.share)
			if r.code != ExitNothing || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "cell 1/") {
				t.Errorf("exit %d, want %d with %q and no cell measured:\n%s", r.code, ExitNothing, want, r.stderr)
			}
		})
		t.Run("load "+tc.name, func(t *testing.T) {
			respDo(t, redis.Addr, "FLUSHALL")
			acl := append([]string{"ACL", "SETUSER", "default", "resetkeys"}, prefixed("~", tc.deny)...)
			respDo(t, redis.Addr, acl...)
			t.Cleanup(func() { respDo(t, redis.Addr, "ACL", "SETUSER", "default", "allkeys") })
			// One key per MSET, so a denied key costs only itself.
			r := runBinary(t, bin, externalArgs(base, "load-"+strconv.Itoa(tc.missing), redis.Addr, "--server-pid", pid, "--dbsize", strconv.Itoa(dbsize), "--load-batch", "1")...)
			want := fmt.Sprintf("the loader saw %d of %d keys acknowledged (%s, %d missing", held, dbsize, tc.share, tc.missing)
			if r.code != ExitNothing || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "cell 1/") {
				t.Errorf("exit %d, want %d with %q and no cell measured:\n%s", r.code, ExitNothing, want, r.stderr)
			}
			if n, _ := respDo(t, redis.Addr, "DBSIZE").(int64); n != int64(held) {
				t.Errorf("redis holds %d keys after the load, want %d: the ACL did not deny what the case needs", n, held)
			}
		})
	}
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}

// startTieredServer starts a real `tierbench server --storage-tier` on a
// free port and returns its command and address. Its in-memory log is
// 128 KiB, so that of 200 000 × 128 B records over 99 % sit on the device,
// as a run demands of a tiered server it did not start.
func startTieredServer(t *testing.T, bin, dir string) (*exec.Cmd, string, int) {
	t.Helper()
	port := testenv.FreePort(t)
	cmd := exec.Command(bin, "server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--memory", "128k", "--page", "32k", "--segment", "16m", "--index", "16m",
		"--storage-tier", "--logdir", dir, "--device-type", "native", "--device-io-backend", "libaio")
	log, err := os.Create(dir + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.StopProcess(cmd); log.Close() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	testenv.MustWaitPing(t, addr, 30*time.Second)
	return cmd, addr, port
}

// TestRunRefusesWrongPid refuses, before preflight and before loading, a
// --server-pid that is an unrelated process, a dead one, or the pid of
// another server, and an address nothing listens on.
func TestRunRefusesWrongPid(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustRedisServer(t)
	base := testenv.MustDiskDir(t)
	tb, _, _ := startTieredServer(t, bin, filepath.Join(base, "tb"))
	redisPid := redis.Cmd.Process.Pid

	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	closed := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))

	cases := []struct {
		name, addr string
		pid        int
		want       []string
	}{
		{"unrelated process", redis.Addr, sleeper.Process.Pid, []string{
			fmt.Sprintf("pid %d (sleep) does not own the socket listening on %s", sleeper.Process.Pid, redis.Addr),
			fmt.Sprintf("pid %d (redis-server) does", redisPid)}},
		{"dead pid", redis.Addr, dead.Process.Pid, []string{fmt.Sprintf("--server-pid %d: no such process", dead.Process.Pid)}},
		{"the other server", redis.Addr, tb.Process.Pid, []string{
			fmt.Sprintf("pid %d (tierbench) does not own the socket listening on %s", tb.Process.Pid, redis.Addr),
			fmt.Sprintf("pid %d (redis-server) does", redisPid)}},
		{"nothing listening", closed, redisPid, []string{"nothing answers at --server-addr " + closed, "connection refused"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := "wrong-" + strconv.Itoa(i)
			r := runBinary(t, bin, externalArgs(base, out, tc.addr, "--server-pid", strconv.Itoa(tc.pid), "--dbsize", "10000", "--data", filepath.Join(base, "data-"+out))...)
			if r.code != ExitNothing {
				t.Errorf("exit %d, want %d:\n%s", r.code, ExitNothing, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			for _, never := range []string{"preflight:", "loading", "bundle"} {
				if strings.Contains(r.stderr, never) {
					t.Errorf("stderr has %q: the refusal came too late:\n%s", never, r.stderr)
				}
			}
			for _, dir := range []string{out, "data-" + out} {
				if _, err := os.Stat(filepath.Join(base, dir)); !os.IsNotExist(err) {
					t.Errorf("%s exists after a refusal (stat: %v), want nothing created", dir, err)
				}
			}
		})
	}
	if n, _ := respDo(t, redis.Addr, "DBSIZE").(int64); n != 0 {
		t.Errorf("redis holds %d keys after the refused runs, want 0: a refused run loaded", n)
	}
}

// TestRunPartlyExcludedExits3 measures an external tiered tierbench server
// and deletes keys after the first pass: the later cells miss, are kept
// out, and the run exits 3 listing them; the report describes the server
// from its own INFO, not tierbench's flags.
func TestRunPartlyExcludedExits3(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	tb, addr, port := startTieredServer(t, bin, filepath.Join(base, "tb"))
	const dbsize = 200_000
	loadKeys(t, bin, port, dbsize)
	out := filepath.Join(base, "out")
	run := startBackground(t, bin, externalArgs(base, "out", addr, "--server-pid", strconv.Itoa(tb.Process.Pid), "--skip-load",
		"--dbsize", strconv.Itoa(dbsize), "--threads", "2,4,8")...)
	run.waitPasses(t, out, 1)
	// Delete 2 % of the keys: the t=4 and t=8 cells now miss.
	del := []string{"DEL"}
	for k := 0; k < dbsize; k += 50 {
		del = append(del, fmt.Sprintf("%016d", k))
	}
	if n, _ := respDo(t, addr, del...).(int64); n != int64(len(del)-1) {
		t.Fatalf("DEL removed %d keys, want %d", n, len(del)-1)
	}
	err := <-run.done
	stdout, stderr := run.stdout, run.stderr
	if code := exitCode(err); code != ExitExcluded {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitExcluded, stderr.String())
	}
	for _, want := range []string{"2 of 3 cells are kept out", "t=4 (misses ", "t=8 (misses "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Count(stdout.String(), "misses*") < 2 {
		t.Errorf("table: got\n%s\nwant t=4 and t=8 marked misses*", stdout.String())
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	rep := string(report)
	for _, want := range []string{"in the external server at " + addr + ": tierbench", "Kept out of the table:",
		fmt.Sprintf("pid %d (tierbench) owns the socket listening on %s", tb.Process.Pid, addr), "INFO server's process_id",
		"sampled GET check of 20000 random keys", "No fio ceiling: the server at " + addr} {
		if !strings.Contains(rep, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, never := range []string{"--memory", "1/20 of the dataset", "tiered with"} {
		if strings.Contains(rep, never) {
			t.Errorf("report.md of an external server says %q", never)
		}
	}
	var res results.Results
	if err := results.ReadJSON(out, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Rows) != 1 || res.Plan.Workload.Backends != nil || res.Plan.Workload.Pins != nil || res.FioIOPS512 != 0 {
		t.Errorf("results.json: rows %v, backends %v, pins %v, fio %v; want the one external row, no backends or pins, no ceiling",
			res.Plan.Rows, res.Plan.Workload.Backends, res.Plan.Workload.Pins, res.FioIOPS512)
	}
}

// fakeNullBulkServer is the one fake: a RESP server whose DBSIZE is right
// but which answers the GET of every key k with k % 1000 == 7 with a null
// bulk, as a server with holes in its index would. No real server can be
// made to do that while its key count stays right.
func fakeNullBulkServer(t *testing.T, dbsize, valueLength int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	value := strings.Repeat("v", valueLength)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serveFake(c, dbsize, value)
			}()
		}
	}()
	return l.Addr().String()
}

func serveFake(c net.Conn, dbsize int, value string) {
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		switch strings.ToUpper(args[0]) {
		case "PING":
			w.WriteString("+PONG\r\n")
		case "DBSIZE":
			fmt.Fprintf(w, ":%d\r\n", dbsize)
		case "INFO":
			info := "# Server\r\nredis_version:7.0.0\r\nprocess_id:" + strconv.Itoa(os.Getpid()) + "\r\n"
			fmt.Fprintf(w, "$%d\r\n%s\r\n", len(info), info)
		case "GET":
			k, _ := strconv.Atoi(args[1])
			if k%1000 == 7 {
				w.WriteString("$-1\r\n")
			} else {
				fmt.Fprintf(w, "$%d\r\n%s\r\n", len(value), value)
			}
		default:
			fmt.Fprintf(w, "-ERR unknown command '%s'\r\n", args[0])
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	v, err := rig.ReadReply(r)
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	out := make([]string, len(arr))
	for i, a := range arr {
		out[i], _ = a.(string)
	}
	return out, nil
}

// TestRunSampledCheckCatchesNullBulks: DBSIZE says every key is there, but
// 10 of the 10 000 GETs come back null; the sampled check (every key, as
// there are fewer than 20 000) names how many and refuses the row.
func TestRunSampledCheckCatchesNullBulks(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	addr := fakeNullBulkServer(t, 10_000, 96)
	r := runBinary(t, bin, externalArgs(base, "out", addr, "--server-pid", strconv.Itoa(os.Getpid()), "--skip-load", "--dbsize", "10000")...)
	want := "10 of 10000 sampled keys missed (0.10 %), 0 had a value of the wrong length (want 96 B) and 0 got an error reply, although DBSIZE says 10000; first: key 0000000000000007: null bulk"
	if r.code != ExitNothing || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "cell 1/") {
		t.Errorf("exit %d, want %d with %q and no cell measured:\n%s", r.code, ExitNothing, want, r.stderr)
	}
	if !strings.Contains(r.stdout, "refused*") {
		t.Errorf("table: got\n%s\nwant the row marked refused*", r.stdout)
	}
}

// TestRunFlagsMeanWhatTheySay: explicit zeros and empty list items are
// refused with the flag's name before anything is created.
func TestRunFlagsMeanWhatTheySay(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--passes", "0"}, "--passes 0: want at least 1 pass"},
		{[]string{"--cell-seconds", "0"}, "--cell-seconds 0"},
		{[]string{"--threads", "8,,32"}, `--threads "8,,32": item 2 of "8,,32" is empty`},
		{[]string{"--backends", "libaio,"}, "--backends"},
		{[]string{"--server-addr", "127.0.0.1:1", "--server-pid", "0"}, "--server-pid 0: want the pid"},
		{[]string{"--server-addr", "127.0.0.1:1", "--memory", "16m"}, "--memory applies to the tiered server a run starts"},
	}
	for i, tc := range cases {
		out, data := filepath.Join(base, fmt.Sprintf("out-%d", i)), filepath.Join(base, fmt.Sprintf("data-%d", i))
		r := runBinary(t, bin, append([]string{"run", "--out", out, "--data", data, "--state-dir", filepath.Join(base, "state")}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("run %v: exit %d, want %d with %q:\n%s", tc.args, r.code, ExitUsage, tc.want, r.stderr)
		}
		for _, dir := range []string{out, data} {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("run %v: %s exists (stat %v), want nothing created by a refused configuration", tc.args, dir, err)
			}
		}
	}
	help := runBinary(t, bin, "run", "--help")
	for _, want := range []string{"Exit status:", "3    finished, but some cells are kept out", "4    nothing publishable", "130"} {
		if help.code != 0 || !strings.Contains(help.stdout, want) {
			t.Errorf("run --help: exit %d, lacks %q", help.code, want)
		}
	}
}

// TestRunProcessSweepsDockerLeftover: a labelled container of a run that
// died is removed by a run that uses the process runtime; a container of
// a run still alive (this test) is not.
func TestRunProcessSweepsDockerLeftover(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	redis := testenv.MustRedisServer(t)
	base := testenv.MustDiskDir(t)
	d, err := docker.NewDriver(t.Context(), docker.Endpoint{}, bin, "sweep-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Engine.Close() })
	live := d.Owner // this test process: alive
	d.Owner = "999999999:1"
	staleID, err := d.Create(t.Context(), "server", "stale", []string{"server", "--port", strconv.Itoa(testenv.FreePort(t)), "--bind", "127.0.0.1"}, "", "", false, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), staleID, client.ContainerRemoveOptions{Force: true}) })
	d.Owner = live
	liveID, err := d.Create(t.Context(), "server", "live", []string{"server", "--port", strconv.Itoa(testenv.FreePort(t)), "--bind", "127.0.0.1"}, "", "", false, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), liveID, client.ContainerRemoveOptions{Force: true}) })

	loadKeys(t, bin, redis.Port, 2000)
	r := runBinary(t, bin, externalArgs(base, "out", redis.Addr, "--server-pid", strconv.Itoa(redis.Cmd.Process.Pid), "--skip-load", "--dbsize", "2000", "--runtime", "process")...)
	if r.code != ExitNothing { // Redis answers from memory: nothing publishable
		t.Errorf("exit %d, want %d:\n%s", r.code, ExitNothing, r.stderr)
	}
	if !strings.Contains(r.stderr, "cleanup: removed container tierbench-sweep-") || !strings.Contains(r.stderr, "no warm-up (--warmup-seconds 0)") {
		t.Errorf("stderr does not say the stale container was removed, or warmed up though told not to:\n%s", r.stderr)
	}
	if _, err := cli.ContainerInspect(t.Context(), staleID, client.ContainerInspectOptions{}); err == nil {
		t.Errorf("stale container %s still exists after a process-runtime run", staleID[:12])
	}
	if _, err := cli.ContainerInspect(t.Context(), liveID, client.ContainerInspectOptions{}); err != nil {
		t.Errorf("the container of a live run was removed: %v", err)
	}
}
