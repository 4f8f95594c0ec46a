package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportVerifyExitCodes(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--verify", "../../compare/testdata/bundles/base"}, 0, ""},
		{[]string{"--verify", "--resign", "why", "../../compare/testdata/bundles/base"}, 2, "give one"},
		{[]string{"--export", "csv", "--verify", "../../compare/testdata/bundles/base"}, 2, "give one"},
		{[]string{"--export", "xml", "../../compare/testdata/bundles/base"}, 1, `--export "xml": want one of csv, benchfmt, hgrm`},
		{[]string{"--export", "hgrm", "../../compare/testdata/bundles/base"}, 1, "give a directory with -o"},
		{[]string{"-o", "x.csv", "../../compare/testdata/bundles/base"}, 2, "-o and --unverified go with --export"},
		{[]string{"--verify", "no-such-bundle"}, 1, "no-such-bundle"},
		{[]string{"--verify"}, 2, "missing argument"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := dispatch(append([]string{"report"}, tt.args...), &stdout, &stderr); code != tt.wantCode {
			t.Errorf("report %q: got exit %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("report %q: got stderr %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
		}
	}
}
