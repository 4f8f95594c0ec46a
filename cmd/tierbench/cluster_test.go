package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestClusterFlagsRefusedWithUsage(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"server", "--cluster-node-id", "a"}, "needs --cluster-nodes FILE and --cluster-node-id ID"},
		{[]string{"server", "--cluster-nodes", "/nonexistent/nodes.txt", "--cluster-node-id", "a"}, "--cluster-nodes: open /nonexistent/nodes.txt"},
		{[]string{"bench", "--cluster-bench", "--online"}, "--online against a cluster is not supported"},
		{[]string{"bench", "--cluster-bench", "--op", "MGET"}, "-CROSSSLOT"},
	}
	for _, tt := range tests {
		expectUsageError(t, tt.args, tt.wantErr)
	}
}

// expectUsageError runs tierbench with args and expects exit 2 with
// wantErr and the usage on stderr.
func expectUsageError(t *testing.T, args []string, wantErr string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := dispatch(args, &stdout, &stderr); code != 2 {
		t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
	}
	if !strings.Contains(stderr.String(), wantErr) || !strings.Contains(stderr.String(), "Usage:") {
		t.Errorf("%q: stderr %q, want %q and the usage", args, stderr.String(), wantErr)
	}
}

func TestServerTLSAndUserFlagsRefusedWithUsage(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"server", "--port", "0"}, "--port 0 without --tls-port: nothing to listen on"},
		{[]string{"server", "--tls-cert-file", "x.crt"}, "need --tls-port"},
		{[]string{"server", "--tls-port", "70000"}, "--tls-port 70000 out of range"},
		{[]string{"server", "--tls-port", "6380", "--tls-auth-clients", "maybe"}, `--tls-auth-clients "maybe": want yes, no or optional`},
		{[]string{"server", "--user", "alice on >pw ~* +@all +get"}, `--user: user alice: rule "+get" is not supported`},
		{[]string{"server", "--auth", "pw", "--user", "default on >x ~* +@all"}, "given by both"},
	} {
		expectUsageError(t, tt.args, tt.wantErr)
	}
}
