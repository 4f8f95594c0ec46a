package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCompareExitCodes(t *testing.T) {
	const a, b = "../../compare/testdata/bundles/base", "../../compare/testdata/bundles/batch4"
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{args: []string{a, b}, wantCode: 0, wantOut: "| Libaio | no pin | 8 |"},
		{args: []string{"--json", a, b}, wantCode: 0, wantOut: `"schema_version": 1`},
		{args: []string{a}, wantCode: 2, wantErr: "want at least two bundles, got 1"},
		// Flags may follow the bundles (parseArgs's convention).
		{args: []string{a, b, "--json"}, wantCode: 0, wantOut: `"schema_version": 1`},
		{args: []string{a, "no-such-dir"}, wantCode: 1, wantErr: "no-such-dir"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"compare"}, tt.args...), &stdout, &stderr)
		if code != tt.wantCode {
			t.Errorf("compare %q: got exit %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr.String())
		}
		if !strings.Contains(stdout.String(), tt.wantOut) {
			t.Errorf("compare %q: got stdout %q, want it to contain %q", tt.args, stdout.String(), tt.wantOut)
		}
		if !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("compare %q: got stderr %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
		}
		if tt.wantCode == 0 && strings.HasPrefix(tt.args[0], "--json") && !json.Valid(stdout.Bytes()) {
			t.Errorf("compare %q: got stdout that is not one JSON document", tt.args)
		}
	}
}
