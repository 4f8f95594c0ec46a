package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/report"
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
		{args: []string{a, "no-such-dir"}, wantCode: 2, wantErr: "no-such-dir"},
		// batch4 (-b 4) is 33 to 60 % slower than base in every cell, p=0.008 with 5 passes a side.
		{args: []string{"--fail-on-regression", "5", a, b}, wantCode: 1, wantOut: "## Gate: --fail-on-regression 5",
			wantErr: "FAIL: 4 cell(s) significantly slower than `base` by more than 5 %: storage Libaio no pin t=8 in `batch4` -60.1 % (p=0.008)"},
		{args: []string{"--fail-on-regression", "70", a, b}, wantCode: 0, wantErr: "pass: no cell is significantly slower than `base` by more than 70 %."},
		{args: []string{"--fail-on-regression", "5", b, a}, wantCode: 0, wantErr: "pass: "},
		{args: []string{"--json", "--fail-on-regression", "5", a, b}, wantCode: 1, wantOut: `"failed": true`},
		{args: []string{"--fail-on-regression", "-1", a, b}, wantCode: 2, wantErr: "want a percentage above 0"},
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

// TestCompareRefusesUnsealed plants the third edit: a bundle with
// its sums deleted and cells.jsonl removed is refused (exit 2), and with
// --unverified compared with every figure from it marked.
func TestCompareRefusesUnsealed(t *testing.T) {
	const a, b = "../../compare/testdata/bundles/base", "../../compare/testdata/bundles/batch4"
	edited := filepath.Join(t.TempDir(), "edited")
	if err := os.CopyFS(edited, os.DirFS(b)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"SHA256SUMS", "cells.jsonl"} {
		if err := os.Remove(filepath.Join(edited, f)); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"compare", a, edited}, &stdout, &stderr); code != 2 || stdout.Len() > 0 ||
		!strings.Contains(stderr.String(), "edited is not verified: no SHA256SUMS") || !strings.Contains(stderr.String(), "--unverified") {
		t.Errorf("got exit %d, stdout %q, stderr %q; want exit 2 naming the missing sums and --unverified, nothing compared", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := dispatch([]string{"compare", "--unverified", a, edited}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "**Not verified, compared only because of --unverified: `edited`") ||
		!strings.Contains(stdout.String(), "| Libaio | no pin | 8 | 131 K | 52 K † | -60.1 % †") {
		t.Errorf("--unverified: got exit %d (%s), want 0 with the bundle named in bold and its figures marked:\n%s", code, stderr.String(), stdout.String())
	}
}

// TestGateWithNoVerdict: over bundles of two passes a cell no difference
// can be significant, so a gate could fail nothing: it says so and exits 2
// instead of passing.
func TestGateWithNoVerdict(t *testing.T) {
	var dirs []string
	for _, src := range []string{"../../compare/testdata/bundles/base", "../../compare/testdata/bundles/batch4"} {
		dir := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		plan, err := os.ReadFile(filepath.Join(dir, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		two := regexp.MustCompile(`"Passes": \d+`).ReplaceAll(plan, []byte(`"Passes": 2`))
		if bytes.Equal(two, plan) {
			t.Fatal("plan.json has no Passes to set")
		}
		if err := os.WriteFile(filepath.Join(dir, "plan.json"), two, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Render(dir); err != nil { // sealed as a run of two passes would be
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	var stdout, stderr bytes.Buffer
	code := dispatch(append([]string{"compare", "--fail-on-regression", "5"}, dirs...), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "no verdict: none of the 4 compared cells could fail the gate") {
		t.Errorf("got exit %d, stderr %q; want 2 and no verdict", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "2 against 2 passes: the smallest p the Mann–Whitney U test can give is 0.333") {
		t.Errorf("got Markdown without the note on too few passes:\n%s", stdout.String())
	}
}
