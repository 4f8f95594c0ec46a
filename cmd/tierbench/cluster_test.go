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
		var stdout, stderr bytes.Buffer
		if code := dispatch(tt.args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", tt.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.wantErr) || !strings.Contains(stderr.String(), "Usage:") {
			t.Errorf("%q: stderr %q, want %q and the usage", tt.args, stderr.String(), tt.wantErr)
		}
	}
}
