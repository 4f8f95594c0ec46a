package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// writeSecret writes content to dir/name with exactly mode.
func writeSecret(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServerSecretFlagsRefused: a password or ACL file that is not the
// owner's alone, a link, or given twice, stops the server before it
// listens, with the reason and the fix.
func TestServerSecretFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	pw := writeSecret(t, dir, "pw", "s3cret\n", 0o600)
	open := writeSecret(t, dir, "open", "s3cret\n", 0o644)
	acl := writeSecret(t, dir, "users.acl", "user alice on >a ~* +@all\n", 0o600)
	badACL := writeSecret(t, dir, "bad.acl", "user alice on >a ~* +@all\n# no comments\n", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(pw, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--requirepass-file", open}, "--requirepass-file: " + open + " may be read or written by group or others (mode 0644): run chmod go-rwx " + open},
		{[]string{"--requirepass-file", link}, "--requirepass-file: " + link + " is a symbolic link"},
		{[]string{"--requirepass-file", dir}, "is not a regular file"},
		{[]string{"--requirepass-file", pw, "--auth", "x"}, "both give the default user's password"},
		{[]string{"--aclfile", acl, "--user", "bob on >b ~* +@all"}, "--aclfile and --user both give ACL users"},
		{[]string{"--aclfile", badACL}, "--aclfile: " + badACL + ":2: want \"user NAME RULE...\""},
		{[]string{"--aclfile", open}, "chmod go-rwx"},
		{[]string{"--aclfile", writeSecret(t, dir, "default.acl", "user default on >x ~* +@all\n", 0o600), "--requirepass-file", pw}, "--aclfile " + dir + "/default.acl: the default user's password is given by both"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"server", "--port", "0", "--tls-port", "1"}, tc.args...)
		if code := dispatch(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", tc.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.wantErr) {
			t.Errorf("%q: stderr %q, want %q", tc.args, stderr.String(), tc.wantErr)
		}
	}
}

// TestServerWarnsOfPasswordsOnArgv: a password given on the command line
// (--auth, or a --user rule with >password) gets a WARNING naming the
// files that keep it off; one from a file, or a user's #hash, gets none.
// Each command ends at --maxclients 0 (exit 2) after the warning's place,
// so no server starts.
func TestServerWarnsOfPasswordsOnArgv(t *testing.T) {
	pw := writeSecret(t, t.TempDir(), "pw", "s3cret\n", 0o600)
	hash := "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--auth", "s3cret"}, true},
		{[]string{"--user", "alice on >s3cret ~* +@all"}, true},
		{[]string{"--requirepass-file", pw}, false},
		{[]string{"--user", "alice on " + hash + " ~* +@all"}, false},
		{nil, false},
	} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"server", "--port", "0"}, tc.args...), "--maxclients", "0")
		if code := dispatch(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", tc.args, code, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "WARNING: a password on the command line"); got != tc.warn {
			t.Errorf("%q: warned %v, want %v (stderr %q)", tc.args, got, tc.warn, stderr.String())
		}
	}
}

// TestServerPasswordsFromFiles: a real server started with
// --requirepass-file and --aclfile authenticates with the files' passwords,
// and none of them is on its command line.
func TestServerPasswordsFromFiles(t *testing.T) {
	dir := t.TempDir()
	pw := writeSecret(t, dir, "pw", "dflt-Secret\n", 0o600)
	acl := writeSecret(t, dir, "users.acl", "user alice on >alice-Secret ~* &* +@all\nuser bob off >bob-Secret ~* +@all\n", 0o400)
	port := testenv.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(testenv.MustBinary(t), "server", "--port", strconv.Itoa(port), "--index", "1m", "--page", "1m",
		"--requirepass-file", pw, "--aclfile", acl)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testenv.StopProcess(cmd)
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	testenv.MustWaitPing(t, addr, 20*time.Second)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cmdline, []byte("Secret")) {
		t.Errorf("the server's command line %q holds a password", cmdline)
	}
	for _, tc := range []struct {
		auth string // the AUTH command sent before PING
		want string // the replies to AUTH and PING
	}{
		{"AUTH dflt-Secret", "+OK +PONG"},
		{"AUTH default dflt-Secret", "+OK +PONG"},
		{"AUTH alice alice-Secret", "+OK +PONG"},
		{"AUTH alice dflt-Secret", "-WRONGPASS invalid username-password pair or user is disabled. -NOAUTH Authentication required."},
		{"AUTH bob bob-Secret", "-WRONGPASS invalid username-password pair or user is disabled. -NOAUTH Authentication required."},
	} {
		got, err := inlineReplies(addr, tc.auth, "PING")
		if err != nil {
			t.Fatalf("%s: %v", tc.auth, err)
		}
		if got != tc.want {
			t.Errorf("%s then PING: got %q, want %q", tc.auth, got, tc.want)
		}
	}
}

// inlineReplies sends each line as an inline command on one connection and
// returns the one-line replies, space-separated.
func inlineReplies(addr string, lines ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(strings.Join(lines, "\r\n") + "\r\n")); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	var replies []string
	for range lines {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		replies = append(replies, strings.TrimSuffix(line, "\r\n"))
	}
	return strings.Join(replies, " "), nil
}
