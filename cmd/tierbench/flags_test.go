package main

import (
	"flag"
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
