package server

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestMaxClients: with maxclients 3 the fourth connection is told why and
// closed, counted in INFO; once one leaves, a new one is served again.
func TestMaxClients(t *testing.T) {
	s := startServer(t, Config{MaxClients: 3})
	var conns []*client
	for i := 0; i < 3; i++ {
		c := dial(t, s)
		if got := c.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("connection %d: PING got %q", i+1, got)
		}
		conns = append(conns, c)
	}
	extra := dial(t, s)
	extra.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(extra.r)
	if err != nil || string(got) != "-ERR max number of clients reached\r\n" {
		t.Errorf("fourth connection: got %q, %v; want the max-clients error, then EOF", got, err)
	}
	if n := infoInt(t, conns[0].do("INFO", "stats"), "rejected_connections"); n != 1 {
		t.Errorf("rejected_connections = %d, want 1", n)
	}
	if got := conns[0].do("CONFIG", "GET", "maxclients"); got != array(bulk("maxclients"), bulk("3")) {
		t.Errorf("CONFIG GET maxclients: got %q, want 3", got)
	}
	conns[2].nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := dial(t, s)
		c.send(encodeArgs("PING"))
		line, _ := c.r.ReadString('\n')
		if line == "+PONG\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a connection closed, a new one still gets %q", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBigBulk: a bulk far past the old 64 MB read buffer (up to
// proto-max-bulk-len, 512 MB) is accepted and answered; the limits are
// shown by CONFIG GET; a request past client-query-buffer-limit gets the
// error before the connection closes.
func TestBigBulk(t *testing.T) {
	s := startServer(t, Config{})
	c := dial(t, s)
	if got := c.do("CONFIG", "GET", "proto-max-bulk-len", "client-query-buffer-limit"); got != array(bulk("client-query-buffer-limit"), bulk("1073741824"), bulk("proto-max-bulk-len"), bulk("536870912")) {
		t.Errorf("CONFIG GET the limits: got %q", got)
	}
	value := bytes.Repeat([]byte("0123456789abcdef"), 80<<20/16) // 80 MB
	go c.send(encodeCommand([]byte("ECHO"), value))
	head, err := c.r.ReadString('\n')
	if err != nil || head != "$"+strconv.Itoa(len(value))+"\r\n" {
		t.Fatalf("ECHO of %d bytes: reply header %q, %v", len(value), head, err)
	}
	got := make([]byte, len(value)+2)
	if _, err := io.ReadFull(c.r, got); err != nil || !bytes.Equal(got[:len(value)], value) {
		t.Fatalf("ECHO of %d bytes: the value came back different (%v)", len(value), err)
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the big bulk: got %q", got)
	}
	if in := infoInt(t, c.do("INFO", "clients"), "client_recent_max_input_buffer"); in > int64(len(value))+1<<20 {
		t.Errorf("read buffer grew to %d bytes for an %d-byte request, want the request's size, not the next power of two", in, len(value))
	}

	small := startServer(t, Config{MaxQueryBytes: 1 << 20})
	sc := dial(t, small)
	if got := sc.do("CONFIG", "GET", "client-query-buffer-limit"); got != array(bulk("client-query-buffer-limit"), bulk("1048576")) {
		t.Errorf("CONFIG GET client-query-buffer-limit with a 1 MiB limit: got %q", got)
	}
	go sc.send(encodeCommand([]byte("ECHO"), value[:2<<20]))
	if got := sc.reply(); !strings.HasPrefix(got, "-ERR Protocol error: request of at least 2097") || !strings.Contains(got, "exceeds the query buffer limit of 1048576 bytes") {
		t.Errorf("a 2 MB request with a 1 MiB limit: got %q, want the query buffer error", got)
	}
	expectClosed(t, sc)
}

// TestClientList: CLIENT LIST shows every connection, by id, with its
// name, and flags=x multi=N for one inside MULTI; CLIENT INFO shows the
// caller only.
func TestClientList(t *testing.T) {
	s := startServer(t, Config{})
	a, b, c := dial(t, s), dial(t, s), dial(t, s)
	a.do("CLIENT", "SETNAME", "first")
	b.do("HELLO", "2", "SETNAME", "second")
	c.do("MULTI")
	c.do("SET", "k", "v")
	ids := map[string]string{}
	for name, cl := range map[string]*client{"first": a, "second": b} {
		ids[name] = strings.TrimSuffix(strings.TrimPrefix(cl.do("CLIENT", "ID"), ":"), "\r\n")
	}
	list := a.do("CLIENT", "LIST")
	lines := strings.Split(strings.TrimSuffix(bulkText(t, list), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("CLIENT LIST with 3 connections: %d lines:\n%s", len(lines), bulkText(t, list))
	}
	var lastID int64
	for _, l := range lines {
		f := fields(l)
		id, _ := strconv.ParseInt(f["id"], 10, 64)
		if id <= lastID {
			t.Errorf("CLIENT LIST not ordered by id:\n%s", bulkText(t, list))
		}
		lastID = id
		for _, k := range []string{"addr", "laddr", "fd", "age", "idle", "flags", "db", "multi", "qbuf", "rbs", "cmd", "user", "resp"} {
			if _, ok := f[k]; !ok {
				t.Errorf("CLIENT LIST line lacks %s=: %q", k, l)
			}
		}
		switch f["name"] {
		case "first":
			if f["id"] != ids["first"] || f["flags"] != "N" || f["multi"] != "-1" || f["cmd"] != "client" {
				t.Errorf("first: %q; want id=%s flags=N multi=-1 cmd=client", l, ids["first"])
			}
		case "second":
			if f["id"] != ids["second"] {
				t.Errorf("second: %q; want id=%s", l, ids["second"])
			}
		case "":
			if f["flags"] != "x" || f["multi"] != "1" {
				t.Errorf("the connection in MULTI: %q; want flags=x multi=1 (the SET queued)", l)
			}
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if got := bulkText(t, a.do("CLIENT", "LIST", "ID", ids["second"])); !strings.Contains(got, "name=second ") || strings.Count(got, "\n") != 1 {
		t.Errorf("CLIENT LIST ID %s: got %q, want the one line of second", ids["second"], got)
	}
	if got := bulkText(t, b.do("CLIENT", "INFO")); !strings.HasPrefix(got, "id="+ids["second"]+" ") || !strings.Contains(got, " name=second ") {
		t.Errorf("CLIENT INFO: got %q, want the caller's line", got)
	}
	if got := a.do("CLIENT", "LIST", "TYPE", "bogus"); got != "-ERR Unknown client type 'bogus'\r\n" {
		t.Errorf("CLIENT LIST TYPE bogus: got %q", got)
	}
}

func bulkText(t *testing.T, raw string) string {
	t.Helper()
	head, body, ok := strings.Cut(raw, "\r\n")
	if !ok || head[0] != '$' {
		t.Fatalf("not a bulk reply: %q", raw)
	}
	return strings.TrimSuffix(body, "\r\n")
}

func fields(line string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestInfoSections: replication says a lone master, cpu counts this
// process, and in memory the store's memory grows with what is written.
func TestInfoSections(t *testing.T) {
	s := startServer(t, Config{})
	c := dial(t, s)
	repl := c.do("INFO", "replication")
	for _, want := range []string{"# Replication\r\n", "role:master\r\n", "connected_slaves:0\r\n", "master_repl_offset:0\r\n"} {
		if !strings.Contains(repl, want) {
			t.Errorf("INFO replication: got %q, want %q in it", repl, want)
		}
	}
	cpu := c.do("INFO", "cpu")
	for _, k := range []string{"used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children"} {
		i := strings.Index(cpu, k+":")
		if i < 0 {
			t.Fatalf("INFO cpu lacks %s: %q", k, cpu)
		}
		v := cpu[i+len(k)+1:]
		v = v[:strings.Index(v, "\r")]
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			t.Errorf("INFO cpu %s = %q, want seconds", k, v)
		}
	}
	before := infoInt(t, c.do("INFO", "memory"), "store_memory_bytes")
	var req []byte
	for i := 0; i < 3000; i++ {
		req = append(req, encodeArgs("SET", fmt.Sprintf("key:%d", i), strings.Repeat("v", 200))...)
	}
	c.send(req)
	for i := 0; i < 3000; i++ {
		c.reply()
	}
	after := infoInt(t, c.do("INFO", "memory"), "store_memory_bytes")
	if after <= before || after < 3000*200 {
		t.Errorf("store_memory_bytes: %d before and %d after writing 600 KB, want it to grow past 600 KB", before, after)
	}
}

// TestConfigSetLimits: the knobs that keep a client from starving the
// server are shown by CONFIG GET and changed by CONFIG SET in Redis's
// format, with Redis's replies word for word where Redis has the knob.
func TestConfigSetLimits(t *testing.T) {
	redis := testenv.MustRedisServer(t)
	s := startServer(t, Config{})
	rc, tc := dialAddr(t, redis.Addr), dial(t, s)
	for _, tt := range []struct {
		args    []string
		want    string // tierbench's reply
		asRedis bool   // Redis answers the same
	}{
		{[]string{"CONFIG", "GET", "timeout"}, array(bulk("timeout"), bulk("0")), true},
		{[]string{"CONFIG", "GET", "client-output-buffer-limit"}, array(bulk("client-output-buffer-limit"), bulk("normal 268435456 67108864 60 slave 268435456 67108864 60 pubsub 33554432 8388608 60")), false},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 7 pubsub 1k 0 0"}, "+OK\r\n", true},
		{[]string{"CONFIG", "GET", "client-output-buffer-limit"}, array(bulk("client-output-buffer-limit"), bulk("normal 1048576 524288 7 slave 268435456 67108864 60 pubsub 1000 0 0")), true},
		{[]string{"CONFIG", "SET", "timeout", "30", "client-output-buffer-limit", "normal 0 0 0"}, "+OK\r\n", true},
		{[]string{"CONFIG", "GET", "timeout"}, array(bulk("timeout"), bulk("30")), true},
		{[]string{"CONFIG", "SET", "timeout", "soon"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer\r\n", true},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration.\r\n", true},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration.\r\n", true},
		{[]string{"CONFIG", "SET", "client-output-buffer-limit", "normal x 2 3"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration.\r\n", true},
		{[]string{"CONFIG", "SET", "databases", "1"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n", true},
		{[]string{"CONFIG", "SET", "no-such-knob", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'no-such-knob'\r\n", true},
		{[]string{"CONFIG", "SET", "max-pending-read-bytes", "64mb"}, "+OK\r\n", false},
		{[]string{"CONFIG", "GET", "max-pending-read-bytes"}, array(bulk("max-pending-read-bytes"), bulk("67108864")), false},
		{[]string{"CONFIG", "SET", "max-pending-read-bytes", "1k"}, "-ERR CONFIG SET failed (possibly related to argument 'max-pending-read-bytes') - argument must be a memory value of at least 1048576 bytes\r\n", false},
	} {
		if got := tc.do(tt.args...); got != tt.want {
			t.Errorf("tierbench %q: got %q, want %q", tt.args, got, tt.want)
		}
		if tt.asRedis {
			if got := rc.do(tt.args...); got != tt.want {
				t.Errorf("redis-server %q: got %q, want %q (as tierbench answers)", tt.args, got, tt.want)
			}
		}
	}
}

// TestPendingReadBudget: a pipeline of GETs whose values on the device
// add up to seven times max-pending-read-bytes, mixed with misses and
// PINGs, is answered in full and in order, every GET with its own value:
// the reads past the budget wait for earlier ones, none is refused. Run
// with the budget set at start and lowered by CONFIG SET.
func TestPendingReadBudget(t *testing.T) {
	const valueBytes, keys, rounds = 100 << 10, 24, 3
	value := func(i int) string {
		return fmt.Sprintf("%04d", i) + strings.Repeat(string(rune('a'+i%26)), valueBytes-4)
	}
	for _, tt := range []struct {
		name      string
		budget    int64
		configSet string
	}{
		{"flag", 1 << 20, ""},
		{"config-set", 64 << 20, "1mb"},
	} {
		for _, dev := range []string{"localmemory", "native"} {
			t.Run(tt.name+"/"+dev, func(t *testing.T) {
				st := tieredStore(t, dev, "libaio")
				st.MemoryBytes, st.PageBytes, st.SegmentBytes = 512<<10, 256<<10, 4<<20
				s := startServer(t, Config{ScatterGatherGet: true, MaxPendingReadBytes: tt.budget, Store: st})
				c := dial(t, s)
				for i := 0; i < keys; i++ {
					if got := c.do("SET", tieredKey(i), value(i)); got != "+OK\r\n" {
						t.Fatalf("SET %s: got %q", tieredKey(i), got)
					}
				}
				if stats := s.Store().Stats(); stats.HeadAddress <= stats.BeginAddress {
					t.Fatalf("nothing reached the device")
				}
				if tt.configSet != "" {
					if got := c.do("CONFIG", "SET", "max-pending-read-bytes", tt.configSet); got != "+OK\r\n" {
						t.Fatalf("CONFIG SET max-pending-read-bytes %s: got %q", tt.configSet, got)
					}
				}
				var req []byte
				var want strings.Builder
				for r := 0; r < rounds; r++ {
					for i := 0; i < keys; i++ {
						k := (i*7 + r) % keys
						req = append(req, encodeArgs("GET", tieredKey(k))...)
						want.WriteString(bulk(value(k)))
						if i%5 == 0 {
							req = append(req, encodeArgs("GET", "missing")...)
							req = append(req, "PING\r\n"...)
							want.WriteString(null + "+PONG\r\n")
						}
					}
				}
				before := s.Store().Stats().CompletedReads
				go c.send(req)
				got := make([]byte, want.Len())
				if n, err := fullRead(c, got); err != nil {
					t.Fatalf("read replies: %v after %d of %d bytes", err, n, want.Len())
				}
				if string(got) != want.String() {
					at := firstDiff(string(got), want.String())
					t.Fatalf("replies differ at byte %d of %d:\ngot  %.100q\nwant %.100q", at, want.Len(), got[at:], want.String()[at:])
				}
				if reads := s.Store().Stats().CompletedReads - before; reads < keys*rounds/2 {
					t.Errorf("%d device reads for %d GETs, want most GETs to read the device", reads, keys*rounds)
				}
			})
		}
	}
}
