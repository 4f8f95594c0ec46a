package main

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/server"
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

// TestEveryCommandHelpAndBadFlag holds every subcommand to one convention:
// --help teaches on stdout and exits 0; an unknown flag exits 2 with the
// reason on stderr.
func TestEveryCommandHelpAndBadFlag(t *testing.T) {
	for _, c := range commands {
		var stdout, stderr bytes.Buffer
		if code := dispatch([]string{c.name, "--help"}, &stdout, &stderr); code != 0 {
			t.Errorf("%s --help: got exit %d, want 0", c.name, code)
		}
		if !strings.Contains(stdout.String(), "Usage: tierbench "+c.name) {
			t.Errorf("%s --help: got stdout %q, want the usage text", c.name, stdout.String())
		}
		stdout.Reset()
		stderr.Reset()
		if code := dispatch([]string{c.name, "--no-such-flag"}, &stdout, &stderr); code != 2 {
			t.Errorf("%s --no-such-flag: got exit %d, want 2", c.name, code)
		}
		if !strings.Contains(stderr.String(), "no-such-flag") {
			t.Errorf("%s --no-such-flag: got stderr %q, want it to name the flag", c.name, stderr.String())
		}
	}
}

func TestParseArgsPositional(t *testing.T) {
	tests := []struct {
		args       []string
		positional int
		wantStatus int
		wantOK     bool
		wantErr    string
	}{
		{[]string{"dir"}, 1, 0, true, ""},
		{nil, 1, 2, false, "missing argument"},
		{[]string{"a", "b"}, 1, 2, false, `unexpected argument "b"`},
		{[]string{"--", "-h"}, 1, 0, true, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		fs := flag.NewFlagSet("probe", flag.ContinueOnError)
		fs.Usage = func() { fmt.Fprintln(fs.Output(), "Usage: tierbench probe") }
		status, ok := parseArgs(fs, tt.args, tt.positional, &stdout, &stderr)
		if status != tt.wantStatus || ok != tt.wantOK {
			t.Errorf("parseArgs(%q, %d): got (%d, %v), want (%d, %v)", tt.args, tt.positional, status, ok, tt.wantStatus, tt.wantOK)
		}
		if !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("parseArgs(%q, %d): got stderr %q, want %q", tt.args, tt.positional, stderr.String(), tt.wantErr)
		}
	}
}

// TestServerHelpListsCommands: server --help names every command the
// server implements (DECR, DECRBY and FLUSHDB were once missing).
func TestServerHelpListsCommands(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"server", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("server --help: exit %d", code)
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(stdout.String()) {
		words[strings.TrimRight(w, ".")] = true
	}
	for _, name := range append(server.CommandNames(), "DECR", "DECRBY", "FLUSHDB") {
		if !words[name] {
			t.Errorf("server --help does not name %s:\n%s", name, stdout.String())
		}
	}
}

// TestMain removes the binary the tests built (testenv.Main).
func TestMain(m *testing.M) { testenv.Main(m) }
