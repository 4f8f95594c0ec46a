package main

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestBenchTLSFlags runs tierbench bench with the peers' TLS and ACL flags
// against a real redis-server's TLS port: exit 0 with every GET a verified
// hit, exit 1 with one line naming what was wrong, exit 2 for flags that
// do not go together.
func TestBenchTLSFlags(t *testing.T) {
	r := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, "--user", "alice", "on", ">pw", "~*", "+@all")
	other := testenv.MustTLSRedisServer(t, testenv.TLSServerCert)
	port := strconv.Itoa(r.TLSPort)
	common := []string{"bench", "--dbsize", "2000", "-t", "2", "-b", "64", "--runtime", "1", "--verify", "--json"}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"flags", []string{"--tls", "--cacert", r.CAFile, "--port", port, "--user", "alice", "--auth", "pw"}, 0, ""},
		{"rediss URI", []string{"-s", "--uri", fmt.Sprintf("rediss://alice:pw@localhost:%s", port), "--cacert", r.CAFile}, 0, ""},
		{"window", []string{"-s", "--pipeline", "window", "--tls", "--cacert", r.CAFile, "--port", port, "--user", "alice", "--auth", "pw"}, 0, ""},
		{"wrong CA", []string{"-s", "--tls", "--cacert", other.CAFile, "--port", port}, 1, "is not signed by the CA in --cacert"},
		{"wrong CA, --insecure", []string{"-s", "--tls", "--insecure", "--cacert", other.CAFile, "--port", port}, 0, ""},
		{"wrong password", []string{"-s", "--uri", fmt.Sprintf("rediss://alice:nope@127.0.0.1:%s", port), "--cacert", r.CAFile}, 1, `refused AUTH as user "alice"`},
		{"user without password", []string{"--tls", "--port", port, "--user", "alice"}, 2, "--user alice needs --auth"},
		{"TLS flag without --tls", []string{"--cacert", r.CAFile, "--port", port}, 2, "need --tls"},
		{"plain URI with TLS flags", []string{"--uri", "redis://localhost:1", "--sni", "x"}, 2, "is plain redis://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(append(append([]string{}, common...), tt.args...), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("got exit %d, want %d\n%s", code, tt.code, stderr.String())
			}
			if tt.want != "" && !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("got stderr %q, want %q", stderr.String(), tt.want)
			}
			warned := strings.Contains(stderr.String(), "WARNING: a password on the command line is shown to every user")
			if argv := slices.Contains(tt.args, "--auth") || strings.Contains(strings.Join(tt.args, " "), ":pw@") || strings.Contains(strings.Join(tt.args, " "), ":nope@"); warned != argv {
				t.Errorf("password on the command line %v: warned %v, want the WARNING line exactly then\n%s", argv, warned, stderr.String())
			}
			if tt.code == 1 && strings.Count(strings.TrimSpace(stripWarning(stderr.String())), "\n") != 0 {
				t.Fatalf("got stderr %q, want one line besides the warning", stderr.String())
			}
			if tt.code == 0 && !strings.Contains(stdout.String(), `"misses": 0`) {
				t.Fatalf("got %s, want a report with 0 misses", stdout.String())
			}
		})
	}
}

// stripWarning is stderr without the warning lines.
func stripWarning(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "WARNING:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
