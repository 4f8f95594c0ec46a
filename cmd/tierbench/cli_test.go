package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpCommandIsCommandHelp: `tierbench help CMD` prints exactly what
// `tierbench CMD --help` prints, for every command, and an unknown one is
// a usage error.
func TestHelpCommandIsCommandHelp(t *testing.T) {
	for _, c := range commands {
		var viaHelp, viaFlag, stderr bytes.Buffer
		code1 := dispatch([]string{"help", c.name}, &viaHelp, &stderr)
		code2 := dispatch([]string{c.name, "--help"}, &viaFlag, &stderr)
		if code1 != 0 || code2 != 0 {
			t.Errorf("%s: got exits %d (help %s) and %d (%s --help), want 0 and 0", c.name, code1, c.name, code2, c.name)
		}
		if viaHelp.String() != viaFlag.String() || viaHelp.Len() == 0 {
			t.Errorf("help %s: got %d bytes differing from %s --help's %d", c.name, viaHelp.Len(), c.name, viaFlag.Len())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"help", "frobnicate"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `unknown command "frobnicate"`) {
		t.Errorf("help frobnicate: got exit %d, stderr %q; want 2 naming it", code, stderr.String())
	}
}

// TestHelpListsFlagsAsDocsWriteThem: every command's --help lists its
// flags as --name (one letter: -x), never the flag package's -name, and
// names a variable's aliases on one line.
func TestHelpListsFlagsAsDocsWriteThem(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^  -[a-z][a-z0-9-]+`)
	for _, c := range commands {
		var stdout, stderr bytes.Buffer
		dispatch([]string{c.name, "--help"}, &stdout, &stderr)
		if m := singleDash.FindString(stdout.String()); m != "" {
			t.Errorf("%s --help: got a flag listed as %q, want --name", c.name, strings.TrimSpace(m))
		}
		fs, _, ok := flagSetOf(c.name)
		if !ok {
			t.Errorf("%s: flagSetOf found no FlagSet", c.name)
			continue
		}
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(stdout.String(), dashed(f.Name)) {
				t.Errorf("%s --help: got no %s in the listing", c.name, dashed(f.Name))
			}
		})
	}
	// Aliases: two names bound to one variable share a line.
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	var threads string
	var other int
	fs.StringVar(&threads, "threads", "8", "client `connections`")
	fs.StringVar(&threads, "t", "8", "client `connections`")
	fs.IntVar(&other, "other", 0, "another")
	got := flagListing(fs)
	want := "  --other int\n    \tanother\n  --threads, -t connections\n    \tclient connections (default \"8\")\n"
	if got != want {
		t.Errorf("flagListing: got\n%q\nwant\n%q", got, want)
	}
}

// TestFlagsAfterPositionals: flags may follow positional arguments, in any
// order, and "--" ends the flags.
func TestFlagsAfterPositionals(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantPos  []string
		wantFlag bool
		wantN    int
	}{
		{[]string{"--verify", "dir"}, []string{"dir"}, true, 0},
		{[]string{"dir", "--verify"}, []string{"dir"}, true, 0},
		{[]string{"a", "-n", "3", "b", "--verify"}, []string{"a", "b"}, true, 3},
		{[]string{"a", "--", "--verify", "-n"}, []string{"a", "--verify", "-n"}, false, 0},
		{[]string{"--", "-h"}, []string{"-h"}, false, 0},
		{nil, nil, false, 0},
	} {
		fs := flag.NewFlagSet("probe", flag.ContinueOnError)
		verify := fs.Bool("verify", false, "")
		n := fs.Int("n", 0, "")
		if err := parseInterspersed(fs, tc.args); err != nil {
			t.Errorf("%q: got error %v", tc.args, err)
			continue
		}
		if !slices.Equal(fs.Args(), tc.wantPos) && !(len(fs.Args()) == 0 && len(tc.wantPos) == 0) || *verify != tc.wantFlag || *n != tc.wantN {
			t.Errorf("%q: got args %q verify %v n %d, want %q %v %d", tc.args, fs.Args(), *verify, *n, tc.wantPos, tc.wantFlag, tc.wantN)
		}
	}
	// The real report command takes DIR before --verify.
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	if code := dispatch([]string{"report", dir, "--verify"}, &stdout, &stderr); code != 1 || strings.Contains(stderr.String(), "unexpected argument") {
		t.Errorf("report DIR --verify on an empty dir: got exit %d, stderr %q; want 1 (not a bundle), not a usage error", code, stderr.String())
	}
}

// TestCompletion: each shell's script names every visible command and
// run's flags; the bash script, sourced in a real bash, completes a
// command, a flag and a shell name.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var stdout, stderr bytes.Buffer
		if code := dispatch([]string{"completion", shell}, &stdout, &stderr); code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, stderr.String())
		}
		for _, c := range commands {
			if !c.hidden && !strings.Contains(stdout.String(), c.name) {
				t.Errorf("completion %s: got no %s", shell, c.name)
			}
		}
		for _, want := range []string{"dbsize", "cell-seconds", "server-addr"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("completion %s: got no run flag %s", shell, want)
			}
		}
		if strings.Contains(stdout.String(), "hostprobe") {
			t.Errorf("completion %s: got the hidden hostprobe", shell)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"completion", "tcsh"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `"tcsh"`) {
		t.Errorf("completion tcsh: got exit %d, stderr %q; want 2 naming it", code, stderr.String())
	}

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	stdout.Reset()
	dispatch([]string{"completion", "bash"}, &stdout, &stderr)
	script := filepath.Join(t.TempDir(), "tierbench.bash")
	if err := os.WriteFile(script, stdout.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words string // COMP_WORDS
		want  string // one of COMPREPLY
	}{
		{"tierbench pre", "preflight"},
		{"tierbench run --cell", "--cell-seconds"},
		{"tierbench bench -", "-t"},
		{"tierbench completion fi", "fish"},
		{"tierbench help com", "compare"},
	} {
		probe := "source " + script + "; COMP_WORDS=(" + tc.words + "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _tierbench; printf '%s\\n' \"${COMPREPLY[@]}\""
		out, err := exec.Command(bash, "-c", probe).CombinedOutput()
		if err != nil || !slices.Contains(strings.Split(string(out), "\n"), tc.want) {
			t.Errorf("bash completion of %q: got %q (%v), want %q among them", tc.words, out, err, tc.want)
		}
	}
}

// FuzzParseInterspersed: any command line parses or fails with an error,
// never panics, and the positional arguments it returns are args' own, in
// their order.
func FuzzParseInterspersed(f *testing.F) {
	for _, seed := range []string{"dir --verify", "a -n 3 b", "a -- --verify", "--", "-n", "--n=x y", "- --verify -"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		fs := flag.NewFlagSet("probe", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Bool("verify", false, "")
		fs.Int("n", 0, "")
		if err := parseInterspersed(fs, args); err != nil {
			return
		}
		rest := args
		for _, p := range fs.Args() {
			i := slices.Index(rest, p)
			if i < 0 {
				t.Fatalf("%q: positional %q is not among the arguments left %q", args, p, rest)
			}
			rest = rest[i+1:]
		}
	})
}
