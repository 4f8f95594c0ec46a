package bench

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// runBinary runs the built tierbench with args and returns its exit status.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(testenv.MustBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run tierbench %v: %v", args, err)
	return 0, "", ""
}

func TestBadFlagsExitTwo(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--nosuchflag"}, "flag provided but not defined: -nosuchflag"},
		{[]string{"--op", "HGETALL"}, `--op "HGETALL" is not one of`},
		{[]string{"--dbsize", "1000", "--keylength", "2"}, "--keylength 2 is too short for --dbsize 1000"},
		{[]string{"-t", "4,x"}, `-t: "4,x" is not a comma-separated list`},
		{[]string{"-t", "0"}, "-t 0 is outside"},
		{[]string{"-b", "0"}, "-b 0"},
		{[]string{"--online", "-t", "1,2"}, "--online takes one thread count"},
		{[]string{"--online", "--runtime", "0"}, "--runtime 0 loads only"},
		{[]string{"--online", "--op-workload", "GET,SET", "--op-percent", "50"}, "2 commands but --op-percent has 1"},
		{[]string{"--runtime", "-1"}, "offline cells need a duration"},
		{[]string{"--runtime", "-5"}, "--runtime -5"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--zipf", "--zipf-theta", "1.5"}, "--zipf-theta 1.5"},
		{[]string{"--key-dist", "pareto"}, `--key-dist: key distribution "pareto"`},
		{[]string{"--key-dist", "hotspot:0.2"}, "hotspot takes 2 parameters"},
		{[]string{"--key-dist", "zipf", "--zipf"}, "--zipf and --key-dist zipf:0.99: give one"},
		{[]string{"--op-mix", "GET:50"}, "--op-mix: op mix \"GET:50\": the shares add up to 50"},
		{[]string{"--workload", "ycsb-z"}, `--workload "ycsb-z" is not one of`},
		{[]string{"--workload", "ycsb-a", "--op-mix", "GET:100"}, "give one (a workload is a named mix)"},
		{[]string{"--workload", "ycsb-a", "--pipeline", "window"}, "use --pipeline batch"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runBinary(t, append([]string{"bench"}, tt.args...)...)
		if code != 2 {
			t.Errorf("bench %v: exit %d, want 2 (stderr %q)", tt.args, code, stderr)
		}
		if !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "Usage: tierbench bench") {
			t.Errorf("bench %v: stderr lacks %q and the usage:\n%s", tt.args, tt.want, stderr)
		}
		if stdout != "" {
			t.Errorf("bench %v: wrote %q to stdout, want nothing", tt.args, stdout)
		}
	}
}

func TestHelpTeaches(t *testing.T) {
	// Asked-for help is output: it goes to stdout.
	code, stdout, _ := runBinary(t, "bench", "--help")
	if code != 0 {
		t.Errorf("--help exit %d, want 0", code)
	}
	for _, want := range []string{"Usage: tierbench bench", "redis-server", "Example", "-dbsize", "(default 1024)", "-zipf-theta", "-itp", "-rate", "-hdr-out", "-verify", "-json", "-load-threads"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestBinaryAgainstRedis(t *testing.T) {
	r := testenv.MustRedisServer(t)
	port := strings.Split(r.Addr, ":")[1]
	code, stdout, stderr := runBinary(t, "bench", "--port", port, "--dbsize", "5000", "-t", "2", "-b", "50", "--runtime", "1", "--verify")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"[Total time]:", "ms for 5000 ops", "[Throughput]:", "[Verify]: 0 mismatched values, 0 misses, 0 errors"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	code, _, stderr = runBinary(t, "bench", "--port", "1", "--dbsize", "10", "--runtime", "0")
	if code != 1 || !strings.Contains(stderr, "connect to 127.0.0.1:1: connection refused") {
		t.Errorf("against a closed port: exit %d, stderr %q; want exit 1 naming the address", code, stderr)
	}
}
