package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPasswordFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "auth")
	os.WriteFile(good, []byte("s3cret\n"), 0o400)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o400)
	for _, tc := range []struct {
		args    []string
		want    string // the password
		wantErr string
	}{
		{args: []string{"--auth", "pw"}, want: "pw"},
		{args: []string{"--auth-file", good}, want: "s3cret"},
		{args: nil, want: ""},
		{args: []string{"--auth", "pw", "--auth-file", good}, wantErr: "both give a password"},
		{args: []string{"--auth-file", filepath.Join(dir, "missing")}, wantErr: "no such file"},
		{args: []string{"--auth-file", empty}, wantErr: "the first line is empty"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		var auth string
		read := passwordFlags(fs, &auth, "password")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := read()
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: got error %v, want one saying %q", tc.args, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || auth != tc.want):
			t.Errorf("%v: got %q, %v; want %q", tc.args, auth, err, tc.want)
		}
	}
}

// TestParseArgsNamesTheCommand: a bad flag is reported with the command's
// name, a guess at the flag meant where one is close, and the usage; exit
// status 2.
func TestParseArgsNamesTheCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // stderr's first line
	}{
		{[]string{"--data", "/x"}, "tierbench preflight: flag provided but not defined: -data (did you mean --data-dir?)"},
		{[]string{"--threds", "8"}, "tierbench preflight: flag provided but not defined: -threds (did you mean --threads?)"},
		{[]string{"--zz"}, "tierbench preflight: flag provided but not defined: -zz"},
		{[]string{"--threads", "x"}, `tierbench preflight: invalid value "x" for flag -threads: bad list`},
	} {
		fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
		fs.String("data-dir", "", "")
		fs.Func("threads", "", func(v string) error {
			if v == "x" {
				return errors.New("bad list")
			}
			return nil
		})
		fs.Usage = func() { fmt.Fprint(fs.Output(), "Usage: tierbench preflight\n") }
		var stdout, stderr strings.Builder
		status, ok := parseArgs(fs, tc.args, 0, &stdout, &stderr)
		if status != 2 || ok {
			t.Errorf("%q: got status %d, ok %v, want 2, false", tc.args, status, ok)
		}
		lines := strings.Split(stderr.String(), "\n")
		if lines[0] != tc.want || !strings.Contains(stderr.String(), "Usage: tierbench preflight") || stdout.Len() != 0 {
			t.Errorf("%q: got stderr %q, stdout %q; want first line %q and the usage", tc.args, stderr.String(), stdout.String(), tc.want)
		}
	}
}
