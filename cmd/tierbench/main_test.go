package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{args: nil, wantCode: 2, wantErr: "Usage:"},
		{args: []string{"--help"}, wantCode: 0, wantOut: "preflight"},
		{args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
		{args: []string{"version"}, wantCode: 0, wantOut: "tierbench"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := dispatch(tt.args, &stdout, &stderr)
		if code != tt.wantCode {
			t.Errorf("dispatch(%q): got exit %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr.String())
		}
		if !strings.Contains(stdout.String(), tt.wantOut) {
			t.Errorf("dispatch(%q): got stdout %q, want it to contain %q", tt.args, stdout.String(), tt.wantOut)
		}
		if !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("dispatch(%q): got stderr %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
		}
	}
}

func TestUsageListsCommandsInStackOrder(t *testing.T) {
	var b bytes.Buffer
	usage(&b)
	out := b.String()
	last := -1
	for _, name := range usageOrder {
		i := strings.Index(out, "\n  "+name+" ")
		if i < 0 {
			t.Fatalf("usage: got no line for %q in\n%s", name, out)
		}
		if i < last {
			t.Errorf("usage: got %q out of order, want the order %v", name, usageOrder)
		}
		last = i
	}
}
