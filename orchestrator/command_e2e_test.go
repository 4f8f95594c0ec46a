package orchestrator

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/shell"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// argvRecorder writes a script at path that, when its first argument is
// want ("" for any), writes its argv ($0 first) to argv, a line a word,
// and the password file it was given to pw (the word after fileFlag, or
// the first argument when fileFlag is ""), then execs real.
func argvRecorder(t *testing.T, path, real, want, fileFlag, argv, pw string) {
	t.Helper()
	copyPw := fmt.Sprintf(`cat "$1" > %s`, pw)
	if fileFlag != "" {
		copyPw = fmt.Sprintf(`prev=; for a in "$@"; do [ "$prev" = %s ] && cat "$a" > %s; prev=$a; done`, fileFlag, pw)
	}
	script := fmt.Sprintf("#!/bin/sh\nif [ -z %q ] || [ \"$1\" = %q ]; then\n  printf '%%s\\n' \"$0\" \"$@\" > %s\n  %s\nfi\nexec %s \"$@\"\n",
		want, want, argv, copyPw, real)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRecordedCommandIsTheArgv: the command a row records in the bundle
// (server_command, report.md) is the argv its server was started with,
// the password file's argument included (tierbench's --auth-file FILE,
// redis-server's config file first), and never the password itself.
// The --binary and --server-bin wrappers write down the argv they were
// given and copy the password file before they exec the real servers.
func TestRecordedCommandIsTheArgv(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustLookPath(t, "redis-server")
	base := testenv.MustDiskDir(t)
	state, out := filepath.Join(base, "state"), filepath.Join(base, "out")
	rec := t.TempDir()
	tbWrap, redisWrap := filepath.Join(rec, "tierbench"), filepath.Join(rec, "redis-server")
	argvOf := map[string]string{"tierbench": filepath.Join(rec, "tierbench.argv"), "redis": filepath.Join(rec, "redis.argv")}
	fileOf := map[string]string{"tierbench": filepath.Join(rec, "tierbench.pw"), "redis": filepath.Join(rec, "redis.conf")}
	argvRecorder(t, tbWrap, bin, "server", "--auth-file", argvOf["tierbench"], fileOf["tierbench"])
	argvRecorder(t, redisWrap, redis, "", "", argvOf["redis"], fileOf["redis"])

	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioMemory, "--server", "tierbench,redis", "--binary", tbWrap, "--server-bin", redisWrap)...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.code, r.stderr)
	}
	_, loads, _ := results.ReadCells(out)
	if len(loads) != 2 {
		t.Fatalf("cells.jsonl: got %d load records, want 2 (tierbench, redis)", len(loads))
	}
	var passwords []string
	for _, l := range loads {
		name := l.Row.ServerName()
		raw, err := os.ReadFile(argvOf[name])
		if err != nil {
			t.Fatalf("%s: the argv its wrapper wrote: %v", name, err)
		}
		argv := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		words, err := shell.Fields(l.ServerCommand, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: the recorded command %q does not parse as a shell's words: %v", name, l.ServerCommand, err)
		}
		if !slices.Equal(words, argv) {
			t.Errorf("%s: recorded command\n  %q\nwant the argv it was started with\n  %q", name, words, argv)
		}
		// Where the password file stands in it: after --auth-file, or
		// redis-server's first argument.
		i := 1
		if name == "tierbench" {
			i = slices.Index(words, "--auth-file") + 1
		}
		if i <= 0 || i >= len(words) || !strings.HasPrefix(words[i], state+"/") {
			t.Errorf("%s: recorded command %q: want the password file under %s (after --auth-file for tierbench, first for redis)", name, words, state)
		}
		file, err := os.ReadFile(fileOf[name])
		if err != nil {
			t.Fatalf("%s: the password file its wrapper copied: %v", name, err)
		}
		pw := strings.TrimSpace(string(file))
		if name == "redis" {
			m := requirepassLine.FindSubmatch(file)
			if m == nil {
				t.Fatalf("redis: its config file: got %q, want one requirepass line", file)
			}
			pw = string(m[1])
		}
		if len(pw) != 32 || strings.Contains(l.ServerCommand, pw) {
			t.Errorf("%s: recorded command %q, password %q: want a 32-digit password, not in the command", name, l.ServerCommand, pw)
		}
		passwords = append(passwords, pw)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, pw := range passwords {
			if bytes.Contains(data, []byte(pw)) {
				t.Errorf("%s holds the run's password", p)
			}
		}
		return nil
	})
	assertNoProcesses(t, bin)
}
