package sut

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redisConfigArgs reads a config file as redis-server does
// (loadServerConfigFromString): split into lines at \n, each trimmed of
// " \t\r\n", blank and # lines skipped, each split by sdssplitargs. It
// returns each directive's arguments, or false where Redis refuses the
// file (an unbalanced quote, a closing quote not followed by a blank).
func redisConfigArgs(conf string) ([][]string, bool) {
	var out [][]string
	for _, line := range strings.Split(conf, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := sdsSplitArgs(line)
		if !ok {
			return nil, false
		}
		out = append(out, args)
	}
	return out, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	v, _ := strconv.ParseUint(string(c), 16, 8)
	return byte(v)
}

// sdsSplitArgs is Redis's sds.c sdssplitargs, byte for byte.
func sdsSplitArgs(line string) ([]string, bool) {
	var out []string
	i := 0
	space := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' }
	for {
		for i < len(line) && space(line[i]) {
			i++
		}
		if i >= len(line) {
			return out, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			switch {
			case inq:
				switch {
				case i >= len(line):
					return nil, false
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])*16+hexVal(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					c := line[i]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, c)
				case line[i] == '"':
					if i+1 < len(line) && !space(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			case insq:
				switch {
				case i >= len(line):
					return nil, false
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !space(line[i+1]) {
						return nil, false
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			default:
				switch {
				case i >= len(line):
					done = true
				case space(line[i]) || line[i] == 0:
					done = true
				case line[i] == '"':
					inq = true
				case line[i] == '\'':
					insq = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		out = append(out, string(cur))
	}
}

// hostile are passwords that would end the value or the line, or add a
// directive, if written unquoted.
var hostile = []string{
	"plain", "two words", `a"quote`, `back\slash`, `\x41`, "line\nport 1", "cr\rlf", "tab\there",
	"'single'", `"`, `\`, " lead and trail ", "#hash", "nul\x00byte", "\xff\xfe", "requirepass x\nrequirepass y",
}

// TestConfigFileHoldsOneRequirepass: every hostile password is written
// as one line holding exactly one directive, requirepass, whose one
// value is the password, as Redis's parser reads it.
func TestConfigFileHoldsOneRequirepass(t *testing.T) {
	for _, pw := range hostile {
		checkConfigFile(t, pw)
	}
}

func checkConfigFile(t *testing.T, pw string) {
	t.Helper()
	b, err := PasswordConfigFile.File(pw)
	if err != nil {
		t.Fatalf("File(%q): %v", pw, err)
	}
	if strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("File(%q): got %q, want one line", pw, b)
	}
	got, ok := redisConfigArgs(string(b))
	if want := [][]string{{"requirepass", pw}}; !ok || !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("File(%q) = %q, read back as %q (ok %v), want %q", pw, b, got, ok, want)
	}
}

func FuzzConfigFile(f *testing.F) {
	for _, pw := range hostile {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		if pw == "" {
			if _, err := PasswordConfigFile.File(pw); err == nil {
				t.Fatal("File(\"\"): no error, want an empty password refused (requirepass \"\" is no password)")
			}
			return
		}
		checkConfigFile(t, pw)
	})
}

// FuzzFlagFile: a Dragonfly flag file is one --requirepass= line whose
// value is the password exactly, or the password is refused.
func FuzzFlagFile(f *testing.F) {
	for _, pw := range hostile {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		b, err := PasswordFlagFile.File(pw)
		if err != nil {
			return
		}
		line, ok := strings.CutSuffix(string(b), "\n")
		if !ok || strings.ContainsAny(line, "\r\n") || strings.TrimSpace(line) != line {
			t.Fatalf("File(%q) = %q, want one line abseil reads as it is", pw, b)
		}
		if v, ok := strings.CutPrefix(line, "--requirepass="); !ok || v != pw {
			t.Fatalf("File(%q) = %q, want --requirepass=%s", pw, b, pw)
		}
	})
}

// TestArgsPutTheFileWhereTheServerReadsIt: a config file first (redis-
// server reads one only as its first argument), a flag last.
func TestArgsPutTheFileWhereTheServerReadsIt(t *testing.T) {
	flags := []string{"--port", "1"}
	for _, c := range []struct {
		p    Password
		want []string
	}{
		{PasswordNone, []string{"--port", "1"}},
		{PasswordAuthFile, []string{"--port", "1", "--auth-file", "F"}},
		{PasswordConfigFile, []string{"F", "--port", "1"}},
		{PasswordFlagFile, []string{"--port", "1", "--flagfile", "F"}},
		{PasswordConfigImport, []string{"--port", "1", "--config-import-path", "F"}},
	} {
		if got := c.p.Args(flags, "F"); !slices.Equal(got, c.want) {
			t.Errorf("Password %d: got %q, want %q", c.p, got, c.want)
		}
	}
	if !slices.Equal(flags, []string{"--port", "1"}) {
		t.Errorf("Args changed its argument: %q", flags)
	}
}

// TestRedisServerTakesHostilePasswords: a real redis-server started with
// the config file as its first argument answers AUTH with each hostile
// password, reports it back as its requirepass, listens on the port of
// its command line (no injected port directive) and refuses a client
// without it.
func TestRedisServerTakesHostilePasswords(t *testing.T) {
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	for i, pw := range hostile {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "requirepass.conf")
			b, err := PasswordConfigFile.File(pw)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(conf, b, 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := l.Addr().(*net.TCPAddr).Port
			l.Close()
			cmd := exec.Command(redis, conf, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no")
			out := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			var c net.Conn
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if c, err = net.Dial("tcp", addr); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("redis-server with %q never listened on %s:\n%s", b, addr, out)
				}
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			rd := bufio.NewReader(c)
			send := func(args ...string) string {
				fmt.Fprintf(c, "*%d\r\n", len(args))
				for _, a := range args {
					fmt.Fprintf(c, "$%d\r\n%s\r\n", len(a), a)
				}
				line, _ := rd.ReadString('\n')
				if strings.HasPrefix(line, "*") || strings.HasPrefix(line, "$") {
					// An array of bulk strings, or one: read it whole.
					n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
					if line[0] == '$' {
						buf := make([]byte, n+2)
						io.ReadFull(rd, buf)
						return string(buf[:n])
					}
					var parts []string
					for range n {
						h, _ := rd.ReadString('\n')
						m, _ := strconv.Atoi(strings.TrimSpace(h[1:]))
						buf := make([]byte, m+2)
						io.ReadFull(rd, buf)
						parts = append(parts, string(buf[:m]))
					}
					return strings.Join(parts, "\x00")
				}
				return strings.TrimSpace(line)
			}
			if got := send("PING"); !strings.HasPrefix(got, "-NOAUTH") {
				t.Errorf("PING without the password: got %q, want -NOAUTH", got)
			}
			if got := send("AUTH", pw); got != "+OK" {
				t.Fatalf("AUTH %q: got %q, want +OK (file %q)", pw, got, b)
			}
			if got, want := send("CONFIG", "GET", "requirepass"), "requirepass\x00"+pw; got != want {
				t.Errorf("CONFIG GET requirepass: got %q, want %q", got, want)
			}
			if got, want := send("CONFIG", "GET", "port"), fmt.Sprintf("port\x00%d", port); got != want {
				t.Errorf("CONFIG GET port: got %q, want %q", got, want)
			}
		})
	}
}
