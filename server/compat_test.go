package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// The compatibility test runs every script in testdata/compat against a
// real redis-server 7 and against tierbench in memory and tiered (libaio
// and io_uring), and diffs the raw replies line by line.
//
// Script syntax (one command a line, words split and quoted as redis-cli
// and inline commands take them):
//
//	# a comment; blank lines are skipped
//	SET k v              sent on the connection "main"
//	@w INCR k            sent on the connection "w" (dialled on first use)
//	!shape CLIENT ID     compare only the reply's shape (type, array length)
//	!sleep 60ms          wait (for expiry)
//	!spill               tierbench only: write and delete filler keys so the
//	                     records written so far leave the in-memory log (a
//	                     no-op against Redis); later reads hit the device
//
// Every script starts on an empty database (FLUSHALL on a fresh
// connection). A reply that differs fails the test unless the line is in
// testdata/compat/allow.txt, where each entry says why the difference is
// accepted; an entry whose line no longer differs anywhere fails too, so
// the list stays short and true.

const compatDir = "testdata/compat"

// compatLine is one line of a script.
type compatLine struct {
	file  string
	num   int
	text  string // the line as written, the allow-list key
	conn  string
	args  []string
	shape bool
	sleep time.Duration
	spill bool
}

func (l compatLine) String() string { return fmt.Sprintf("%s:%d: %s", l.file, l.num, l.text) }

// loadCompatScripts reads every *.txt script but allow.txt.
func loadCompatScripts(t *testing.T) map[string][]compatLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(compatDir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no compatibility scripts in %s (%v)", compatDir, err)
	}
	scripts := map[string][]compatLine{}
	for _, f := range files {
		base := filepath.Base(f)
		if base == "allow.txt" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, raw := range strings.Split(string(b), "\n") {
			text := strings.TrimSpace(raw)
			if text == "" || text[0] == '#' {
				continue
			}
			l, err := parseCompatLine(text)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			l.file, l.num = base, i+1
			scripts[base] = append(scripts[base], l)
		}
	}
	return scripts
}

func parseCompatLine(text string) (compatLine, error) {
	l := compatLine{text: text, conn: "main"}
	rest := text
	if strings.HasPrefix(rest, "@") {
		name, r, ok := strings.Cut(rest[1:], " ")
		if !ok || name == "" {
			return l, fmt.Errorf("%q: want @conn COMMAND ...", text)
		}
		l.conn, rest = name, r
	}
	switch {
	case strings.HasPrefix(rest, "!sleep "):
		d, err := time.ParseDuration(strings.TrimSpace(rest[len("!sleep "):]))
		if err != nil {
			return l, fmt.Errorf("%q: %v", text, err)
		}
		l.sleep = d
		return l, nil
	case rest == "!spill":
		l.spill = true
		return l, nil
	case strings.HasPrefix(rest, "!shape "):
		l.shape, rest = true, rest[len("!shape "):]
	case strings.HasPrefix(rest, "!"):
		return l, fmt.Errorf("%q: unknown directive", text)
	}
	words, n, _, err := parseCommand([]byte(rest+"\n"), nil, defaultLimits)
	if err != nil || n == 0 || len(words) == 0 {
		return l, fmt.Errorf("%q: cannot split into words (%v)", text, err)
	}
	for _, w := range words {
		l.args = append(l.args, string(w))
	}
	return l, nil
}

// loadAllowList reads testdata/compat/allow.txt: "<script line> ## <why>".
func loadAllowList(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(compatDir, "allow.txt"))
	if err != nil {
		t.Fatal(err)
	}
	allow := map[string]string{}
	for i, raw := range strings.Split(string(b), "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || text[0] == '#' {
			continue
		}
		line, why, ok := strings.Cut(text, " ## ")
		if !ok || strings.TrimSpace(why) == "" {
			t.Fatalf("allow.txt:%d: %q: want \"<script line> ## <why the difference is accepted>\"", i+1, text)
		}
		allow[strings.TrimSpace(line)] = strings.TrimSpace(why)
	}
	return allow
}

// compatTarget is one server the scripts run against.
type compatTarget struct {
	name  string
	addr  string
	spill func(t *testing.T) // nil: !spill is a no-op
	// dial, when set, opens the script's connections (over TLS);
	// otherwise they are plain TCP to addr.
	dial func() (net.Conn, error)
	// auth, when set, is sent before FLUSHALL on the setup connection.
	auth []string
}

// compatConn is one named connection of a script run.
type compatConn struct {
	nc net.Conn
	r  *bufio.Reader
}

// runCompatScript runs lines against target and returns one reply per
// line (empty for directives), each rendered for comparison.
func runCompatScript(t *testing.T, target compatTarget, lines []compatLine) []string {
	t.Helper()
	conns := map[string]*compatConn{}
	defer func() {
		for _, c := range conns {
			c.nc.Close()
		}
	}()
	get := func(name string) *compatConn {
		if c := conns[name]; c != nil {
			return c
		}
		dial := target.dial
		if dial == nil {
			dial = func() (net.Conn, error) { return net.Dial("tcp", target.addr) }
		}
		nc, err := dial()
		if err != nil {
			t.Fatalf("%s: dial %s: %v", target.name, target.addr, err)
		}
		c := &compatConn{nc: nc, r: bufio.NewReader(nc)}
		conns[name] = c
		return c
	}
	do := func(c *compatConn, args []string) string {
		c.nc.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.nc.Write(encodeArgs(args...)); err != nil {
			return "(write failed: " + err.Error() + ")"
		}
		b, err := readReply(c.r)
		if err != nil {
			return string(b) + "(connection closed)"
		}
		return string(b)
	}
	if target.auth != nil {
		if got := do(get("setup"), target.auth); got != "+OK\r\n" {
			t.Fatalf("%s: %q before the script: %q", target.name, target.auth, got)
		}
	}
	if got := do(get("setup"), []string{"FLUSHALL"}); got != "+OK\r\n" {
		t.Fatalf("%s: FLUSHALL before the script: %q", target.name, got)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case l.sleep > 0:
			time.Sleep(l.sleep)
		case l.spill:
			if target.spill != nil {
				target.spill(t)
			}
		default:
			c := get(l.conn)
			reply := do(c, l.args)
			if strings.HasSuffix(reply, "(connection closed)") || strings.HasSuffix(reply, ")") && strings.HasPrefix(reply, "(write") {
				c.nc.Close()
				delete(conns, l.conn)
			}
			if l.shape {
				reply = replyShape(reply)
			}
			out[i] = reply
		}
	}
	return out
}

// replyShape reduces a raw reply to its type and size class: the kind
// byte, and for arrays the element count.
func replyShape(raw string) string {
	if raw == "" {
		return ""
	}
	switch raw[0] {
	case '*':
		head, _, _ := strings.Cut(raw, "\r\n")
		return "array " + head[1:]
	case '$':
		if strings.HasPrefix(raw, "$-1") {
			return "null bulk"
		}
		return "bulk"
	case ':':
		return "integer"
	case '+':
		return "status"
	case '-':
		code, _, _ := strings.Cut(raw[1:], " ")
		return "error " + code
	}
	return "unknown " + strconv.Quote(raw)
}

// spillFiller writes and then deletes enough filler keys to push every
// record written so far out of a tieredStore's in-memory log.
func spillFiller(s *Server) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		c := dial(t, s)
		defer c.nc.Close()
		const n = 2000 // 2000 x ~120 B records, twice: well past 128 KiB
		var req []byte
		for i := 0; i < n; i++ {
			req = append(req, encodeArgs("SET", fmt.Sprintf("compat-spill:%d", i), strings.Repeat("f", 96))...)
		}
		for i := 0; i < n; i++ {
			req = append(req, encodeArgs("DEL", fmt.Sprintf("compat-spill:%d", i))...)
		}
		c.send(req)
		for i := 0; i < 2*n; i++ {
			c.reply()
		}
	}
}

func TestCompatWithRedis(t *testing.T) {
	scripts := loadCompatScripts(t)
	allow := loadAllowList(t)
	redis := testenv.MustRedisServer(t)
	targets := []compatTarget{{name: "memory", addr: startServer(t, Config{ScatterGatherGet: true}).Addr().String()}}
	for _, backend := range []string{"libaio", "uring"} {
		s := startServer(t, Config{ScatterGatherGet: true, Store: tieredStore(t, "native", backend)})
		targets = append(targets, compatTarget{name: "tiered-" + backend, addr: s.Addr().String(), spill: spillFiller(s)})
	}
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	slices.Sort(names)
	differs := map[string]bool{} // allow-list keys that differed somewhere
	for _, name := range names {
		lines := scripts[name]
		t.Run(name, func(t *testing.T) {
			want := runCompatScript(t, compatTarget{name: "redis", addr: redis.Addr}, lines)
			for _, target := range targets {
				got := runCompatScript(t, target, lines)
				for i, l := range lines {
					if got[i] == want[i] {
						continue
					}
					if why, ok := allow[l.text]; ok {
						differs[l.text] = true
						t.Logf("%s: %s: allowed difference (%s):\n  redis:     %q\n  tierbench: %q", target.name, l, why, want[i], got[i])
						continue
					}
					t.Errorf("%s: %s:\n  got  %q\n  want %q (redis-server)", target.name, l, got[i], want[i])
				}
			}
		})
	}
	used := map[string]bool{}
	for _, lines := range scripts {
		for _, l := range lines {
			used[l.text] = true
		}
	}
	for line := range allow {
		switch {
		case !used[line]:
			t.Errorf("allow.txt: %q is in no script: remove the entry", line)
		case !differs[line] && !t.Failed():
			t.Errorf("allow.txt: %q now answers as Redis does everywhere: remove the entry", line)
		}
	}
}

// TestCommandInfoMatchesRedis holds the command table to Redis's own: for
// every command both implement, COMMAND INFO's name, arity, flags, key
// positions and ACL categories are the same (tips, key specs and
// subcommands are not described by tierbench).
func TestCommandInfoMatchesRedis(t *testing.T) {
	redis := testenv.MustRedisServer(t)
	s := startServer(t, Config{})
	rc := dialAddr(t, redis.Addr)
	tc := dial(t, s)
	for _, name := range commandNames {
		want := firstElements(t, rc.do("COMMAND", "INFO", name), 7)
		if want == "" {
			t.Errorf("redis-server does not know %s", name)
			continue
		}
		if got := firstElements(t, tc.do("COMMAND", "INFO", name), 7); got != want {
			t.Errorf("COMMAND INFO %s:\n  got  %q\n  want %q (redis-server)", name, got, want)
		}
	}
}

// firstElements returns the raw bytes of the first n elements of the one
// entry of a COMMAND INFO reply ("" for a null entry).
func firstElements(t *testing.T, raw string, n int) string {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	if _, err := r.ReadString('\n'); err != nil { // *1
		t.Fatalf("COMMAND INFO reply %q", raw)
	}
	head, _ := r.ReadString('\n')
	if head == "$-1\r\n" || head == "*-1\r\n" {
		return ""
	}
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		el, err := readReply(r)
		if err != nil {
			t.Fatalf("COMMAND INFO reply %q: %v", raw, err)
		}
		b.Write(el)
	}
	return b.String()
}

// dialAddr is dial for any RESP server address.
func dialAddr(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}
