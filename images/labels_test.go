package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildArgsFromARealBinary builds a small program in a git
// repository of its own, once committed and once with a change, and
// reads its revision back as BuildArgs gives it to the Dockerfile.
func TestBuildArgsFromARealBinary(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/probe\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "commit", "-qm", "probe")
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(string(out))
	for _, tc := range []struct {
		change bool
		want   string
	}{{false, head}, {true, head + "-dirty"}} {
		if tc.change {
			os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println() }\n"), 0o644)
		}
		run("go", "build", "-trimpath", "-o", "probe", ".")
		bin, err := os.ReadFile(filepath.Join(dir, "probe"))
		if err != nil {
			t.Fatal(err)
		}
		args := BuildArgs(bin)
		if got := args["REVISION"]; got == nil || *got != tc.want {
			t.Errorf("REVISION: got %v, want %s", got, tc.want)
		}
		// The toolchain stamps a pseudo-version naming the commit.
		if got := args["VERSION"]; got == nil || !strings.Contains(*got, head[:12]) {
			t.Errorf("VERSION: got %v, want a pseudo-version naming %s", got, head[:12])
		}
	}
	if got := BuildArgs([]byte("not a Go binary")); len(got) != 0 {
		t.Errorf("BuildArgs of a non-binary: got %v, want none", got)
	}
}

// TestDockerfileLabels: the Dockerfile sets every OCI label of Labels,
// from the build arguments BuildArgs fills.
func TestDockerfileLabels(t *testing.T) {
	if !labelled(Dockerfile) {
		t.Errorf("images/tierbench.Dockerfile: got labels missing, want every one of %q", Labels)
	}
	for _, arg := range []string{"ARG VERSION=unknown", "ARG REVISION=unknown", "${VERSION}", "${REVISION}"} {
		if !strings.Contains(Dockerfile, arg) {
			t.Errorf("images/tierbench.Dockerfile: got no %q", arg)
		}
	}
}
