package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCommands(t *testing.T) {
	s := startServer(t, Config{})
	c := dial(t, s)
	nCommands := strconv.Itoa(len(commands))
	runSteps(t, c, []step{
		{args: []string{"PING"}, want: "+PONG\r\n"},
		{args: []string{"ping", "hi"}, want: bulk("hi")},
		{args: []string{"PING", "a", "b"}, want: wrongArgs("ping")},
		{args: []string{"ECHO", "hello world"}, want: bulk("hello world")},
		{args: []string{"ECHO", ""}, want: bulk("")},
		{args: []string{"ECHO"}, want: wrongArgs("echo")},
		{args: []string{"ECHO", "a", "b"}, want: wrongArgs("echo")},

		{args: []string{"GET", "a"}, want: null},
		{args: []string{"SET", "a", "1"}, want: "+OK\r\n"},
		{args: []string{"GeT", "a"}, want: bulk("1")},
		{args: []string{"SET", "a", "binary\r\n\x00\xff"}, want: "+OK\r\n"},
		{args: []string{"GET", "a"}, want: bulk("binary\r\n\x00\xff")},
		{args: []string{"SET", "", ""}, want: "+OK\r\n"},
		{args: []string{"GET", ""}, want: bulk("")},
		{args: []string{"GET"}, want: wrongArgs("get")},
		{args: []string{"GET", "a", "b"}, want: wrongArgs("get")},
		{args: []string{"SET", "a"}, want: wrongArgs("set")},
		{args: []string{"SET", "a", "b", "EX", "10", "PX", "5"}, want: "-ERR syntax error\r\n"},
		{args: []string{"SET", "a", "b", "nx"}, want: null}, // a exists: NX writes nothing
		{args: []string{"SET", "a", "b", "KEEPTTL", "EX", "1"}, want: "-ERR syntax error\r\n"},
		{args: []string{"SET", "a", "b", "EX", "0"}, want: "-ERR invalid expire time in 'set' command\r\n"},
		{args: []string{"SET", "a", "b", "bogus"}, want: "-ERR syntax error\r\n"},
		{args: []string{"GET", "a"}, want: bulk("binary\r\n\x00\xff")},

		{args: []string{"MSET", "k1", "v1", "k2", "v2"}, want: "+OK\r\n"},
		{args: []string{"MSET", "k1"}, want: wrongArgs("mset")},
		{args: []string{"MSET", "k1", "v1", "k2"}, want: wrongArgs("mset")},
		{args: []string{"MGET", "k1", "nope", "k2"}, want: array(bulk("v1"), null, bulk("v2"))},
		{args: []string{"MGET"}, want: wrongArgs("mget")},
		{args: []string{"EXISTS", "k1", "k1", "nope", "k2"}, want: ":3\r\n"},
		{args: []string{"EXISTS"}, want: wrongArgs("exists")},
		{args: []string{"DEL", "k1", "nope"}, want: ":1\r\n"},
		{args: []string{"DEL", "k1"}, want: ":0\r\n"},
		{args: []string{"GET", "k1"}, want: null},
		{args: []string{"DEL"}, want: wrongArgs("del")},

		{args: []string{"INCR", "n"}, want: ":1\r\n"},
		{args: []string{"INCRBY", "n", "41"}, want: ":42\r\n"},
		{args: []string{"INCRBY", "n", "-50"}, want: ":-8\r\n"},
		{args: []string{"GET", "n"}, want: bulk("-8")},
		{args: []string{"DECR", "n"}, want: ":-9\r\n"},
		{args: []string{"DECRBY", "n", "1"}, want: ":-10\r\n"},
		{args: []string{"INCRBY", "n", "x"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"INCRBY", "n", "1.5"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"INCRBY", "n", "99999999999999999999"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"INCR", "k2"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"GET", "k2"}, want: bulk("v2")},
		{args: []string{"SET", "big", "9223372036854775807"}, want: "+OK\r\n"},
		{args: []string{"INCR", "big"}, want: "-ERR increment or decrement would overflow\r\n"},
		{args: []string{"GET", "big"}, want: bulk("9223372036854775807")},
		{args: []string{"SET", "small", "-9223372036854775808"}, want: "+OK\r\n"},
		{args: []string{"DECR", "small"}, want: "-ERR increment or decrement would overflow\r\n"},
		{args: []string{"DECRBY", "x", "-9223372036854775808"}, want: "-ERR decrement would overflow\r\n"},
		{args: []string{"SET", "spaced", " 1"}, want: "+OK\r\n"},
		{args: []string{"INCR", "spaced"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"INCR"}, want: wrongArgs("incr")},
		{args: []string{"INCRBY", "n"}, want: wrongArgs("incrby")},

		// a, "", k2, n, big, small, spaced
		{args: []string{"DBSIZE"}, want: ":7\r\n"},
		{args: []string{"DBSIZE", "x"}, want: wrongArgs("dbsize")},
		{args: []string{"INFO", "keyspace"}, want: bulk("# Keyspace\r\ndb0:keys=7,expires=0,avg_ttl=0\r\n")},
		{args: []string{"FLUSHALL", "bogus"}, want: "-ERR syntax error\r\n"},
		{args: []string{"FLUSHALL"}, want: "+OK\r\n"},
		{args: []string{"DBSIZE"}, want: ":0\r\n"},
		{args: []string{"GET", "k2"}, want: null},
		{args: []string{"FLUSHALL", "ASYNC"}, want: "+OK\r\n"},

		{args: []string{"SELECT", "0"}, want: "+OK\r\n"},
		{args: []string{"SELECT", "1"}, want: "-ERR DB index is out of range\r\n"},
		{args: []string{"SELECT", "x"}, want: "-ERR value is not an integer or out of range\r\n"},
		{args: []string{"SELECT"}, want: wrongArgs("select")},

		{args: []string{"FOO"}, want: "-ERR unknown command 'FOO', with args beginning with: \r\n"},
		{args: []string{"foo", "a", "b"}, want: "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"},
		{args: []string{"foo", "a\r\nb"}, want: "-ERR unknown command 'foo', with args beginning with: 'a  b' \r\n"},
		{args: []string{strings.Repeat("x", 200)}, want: "-ERR unknown command '" + strings.Repeat("x", 128) + "', with args beginning with: \r\n"},
		{args: []string{"foo", strings.Repeat("y", 200), "z"}, want: "-ERR unknown command 'foo', with args beginning with: '" + strings.Repeat("y", 128) + "' \r\n"},

		{inline: "SET inl \"two words\"\r\n", want: "+OK\r\n"},
		{inline: "GET inl\n", want: bulk("two words")},
		{inline: "  ping  \r\n", want: "+PONG\r\n"},
		{inline: "\r\nPING\r\n", want: "+PONG\r\n"},
		{inline: "get\r\n", want: wrongArgs("get")},
		{inline: "MGET inl 'no such'\r\n", want: array(bulk("two words"), null)},

		{args: []string{"CONFIG", "GET", "save"}, want: array(bulk("save"), bulk(""))},
		{args: []string{"CONFIG", "GET", "appendonly"}, want: array(bulk("appendonly"), bulk("no"))},
		{args: []string{"config", "get", "databases", "maxmemory"}, want: array(bulk("databases"), bulk("1"), bulk("maxmemory"), bulk("0"))},
		{args: []string{"CONFIG", "GET", "maxmemory*"}, want: array(bulk("maxmemory"), bulk("0"), bulk("maxmemory-policy"), bulk("noeviction"))},
		{args: []string{"CONFIG", "GET", "no-such-thing"}, want: "*0\r\n"},
		{args: []string{"CONFIG", "GET", "["}, want: "*0\r\n"},
		{args: []string{"CONFIG", "GET"}, want: wrongArgs("config|get")},
		{args: []string{"CONFIG", "SET", "save", ""}, want: "-ERR CONFIG SET failed (possibly related to argument 'save') - can't set immutable config\r\n"},
		{args: []string{"CONFIG", "FOO"}, want: "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{args: []string{"CONFIG"}, want: wrongArgs("config")},

		{args: []string{"COMMAND", "COUNT"}, want: ":" + nCommands + "\r\n"},
		{args: []string{"COMMAND"}, prefix: "*" + nCommands + "\r\n*10\r\n$3\r\nacl\r\n:-2\r\n"},
		{args: []string{"COMMAND", "INFO", "get", "nope"}, prefix: "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"},
		{args: []string{"COMMAND", "DOCS", "get"}, want: array(bulk("get"), array(bulk("summary"), bulk(commands["get"].summary), bulk("group"), bulk("string")))},
		{args: []string{"COMMAND", "DOCS"}, prefix: "*" + strconv.Itoa(2*len(commands)) + "\r\n$3\r\nacl\r\n"},
		{args: []string{"COMMAND", "LIST"}, prefix: "*" + nCommands + "\r\n$3\r\nacl\r\n$6\r\nappend\r\n$4\r\nauth\r\n"},
		{args: []string{"COMMAND", "FOO"}, want: "-ERR unknown subcommand 'FOO'. Try COMMAND HELP.\r\n"},

		{args: []string{"CLIENT", "GETNAME"}, want: null},
		{args: []string{"CLIENT", "SETNAME", "bench-1"}, want: "+OK\r\n"},
		{args: []string{"CLIENT", "GETNAME"}, want: bulk("bench-1")},
		{args: []string{"CLIENT", "SETNAME", "has space"}, want: "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{args: []string{"CLIENT", "SETNAME"}, want: wrongArgs("client|setname")},
		{args: []string{"CLIENT", "ID"}, prefix: ":"},
		{args: []string{"CLIENT", "INFO"}, prefix: "$"},
		{args: []string{"CLIENT", "SETINFO", "LIB-NAME", "go-redis"}, want: "+OK\r\n"},
		{args: []string{"CLIENT", "KILL"}, want: "-ERR unknown subcommand 'KILL'. Try CLIENT HELP.\r\n"},
		{args: []string{"CLIENT"}, want: wrongArgs("client")},

		{args: []string{"HELLO", "3"}, prefix: "-NOPROTO "},
		{args: []string{"HELLO", "1"}, want: "-NOPROTO unsupported protocol version\r\n"},
		{args: []string{"HELLO", "x"}, want: "-ERR Protocol version is not an integer or out of range\r\n"},
		{args: []string{"HELLO", "2", "FOO"}, want: "-ERR Syntax error in HELLO option 'FOO'\r\n"},
		{args: []string{"HELLO", "2", "SETNAME", "viahello"}, prefix: "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"},
		{args: []string{"CLIENT", "GETNAME"}, want: bulk("viahello")},
		{args: []string{"HELLO"}, prefix: "*14\r\n"},

		{args: []string{"AUTH", "x"}, want: "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{args: []string{"AUTH"}, want: wrongArgs("auth")},
		{args: []string{"SHUTDOWN", "ABORT"}, want: "-ERR No shutdown in progress.\r\n"},
		{args: []string{"SHUTDOWN", "bogus"}, want: "-ERR syntax error\r\n"},
	})
	// QUIT answers and closes.
	if got := c.do("QUIT"); got != "+OK\r\n" {
		t.Fatalf("QUIT: got %q, want +OK", got)
	}
	if b, err := c.r.ReadByte(); err != io.EOF {
		t.Fatalf("after QUIT: got byte %q err %v, want EOF", b, err)
	}
}

func TestInfo(t *testing.T) {
	s := startServer(t, Config{})
	c := dial(t, s)
	c.do("SET", "a", "b")
	c.do("GET", "a")
	c.do("GET", "missing")
	all := c.do("INFO")
	for _, want := range []string{
		"# Server\r\n", "redis_version:" + redisCompatVersion + "\r\n", "tcp_port:" + strconv.Itoa(s.port()) + "\r\n",
		"# Clients\r\n", "connected_clients:1\r\n",
		"# Memory\r\n", "used_memory:",
		"# Stats\r\n", "keyspace_hits:1\r\n", "keyspace_misses:1\r\n", "total_commands_processed:3\r\n",
		"# Store\r\n", "Log.BeginAddress:", "Log.HeadAddress:", "Log.ReadOnlyAddress:", "Log.TailAddress:", "Log.FlushedAddress:0\r\n",
		"Index.Buckets:16384\r\n", "Index.OverflowBuckets:", "Device.PendingReads:0\r\n", "Device.CompletedReads:0\r\n",
		"Device.Backend:none\r\n", "Device.SectorSize:", "Store.Tiered:0\r\n",
		"# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("INFO: got\n%s\nwant it to contain %q", all, want)
		}
	}
	sections := []struct{ arg, want, notWant string }{
		{"server", "# Server\r\n", "# Clients"},
		{"STORE", "# Store\r\n", "# Server"},
		{"stats", "# Stats\r\n", "# Store"},
		{"all", "# Keyspace\r\n", ""},
		{"nosuchsection", "", "#"},
	}
	for _, sc := range sections {
		got := c.do("INFO", sc.arg)
		if !strings.Contains(got, sc.want) || (sc.notWant != "" && strings.Contains(got, sc.notWant)) {
			t.Errorf("INFO %s: got %q, want it to contain %q and not %q", sc.arg, got, sc.want, sc.notWant)
		}
	}
	if got := c.do("INFO", "nosuchsection"); got != bulk("") {
		t.Errorf("INFO nosuchsection: got %q, want an empty bulk string", got)
	}
}

func TestAuth(t *testing.T) {
	s := startServer(t, Config{Auth: "s3cret"})
	c := dial(t, s)
	runSteps(t, c, []step{
		{args: []string{"GET", "a"}, want: "-NOAUTH Authentication required.\r\n"},
		{args: []string{"PING"}, want: "-NOAUTH Authentication required.\r\n"},
		{args: []string{"GET"}, want: wrongArgs("get")},
		{args: []string{"FOO"}, want: "-ERR unknown command 'FOO', with args beginning with: \r\n"},
		{args: []string{"HELLO", "2"}, prefix: "-NOAUTH HELLO must be called with the client already authenticated"},
		{args: []string{"AUTH", "wrong"}, want: "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{args: []string{"AUTH", "admin", "s3cret"}, want: "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{args: []string{"AUTH", "a", "b", "c"}, want: "-ERR syntax error\r\n"},
		{args: []string{"GET", "a"}, want: "-NOAUTH Authentication required.\r\n"},
		{args: []string{"AUTH", "s3cret"}, want: "+OK\r\n"},
		{args: []string{"GET", "a"}, want: null},
		{args: []string{"AUTH", "default", "s3cret"}, want: "+OK\r\n"},
	})
	c2 := dial(t, s)
	runSteps(t, c2, []step{
		{args: []string{"HELLO", "2", "AUTH", "default", "nope"}, want: "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{args: []string{"HELLO", "2", "AUTH", "default", "s3cret"}, prefix: "*14\r\n"},
		{args: []string{"PING"}, want: "+PONG\r\n"},
	})
	// Before AUTH only small requests are parsed at all.
	c3 := dial(t, s)
	c3.send([]byte("*11\r\n"))
	if got := c3.reply(); got != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Errorf("unauthenticated 11-element request: got %q", got)
	}
	expectClosed(t, c3)
	c4 := dial(t, s)
	c4.send([]byte("*2\r\n$4\r\nAUTH\r\n$20000\r\n"))
	if got := c4.reply(); got != "-ERR Protocol error: unauthenticated bulk length\r\n" {
		t.Errorf("unauthenticated 20000-byte bulk: got %q", got)
	}
	expectClosed(t, c4)
}

func TestProtocolErrors(t *testing.T) {
	s := startServer(t, Config{MaxQueryBytes: 128 << 10})
	tests := []struct {
		name    string
		in      string
		replies []string // before the connection closes
	}{
		{"bad bulk length", "*1\r\n$x\r\n", []string{"-ERR Protocol error: invalid bulk length\r\n"}},
		{"negative bulk length", "*1\r\n$-5\r\n", []string{"-ERR Protocol error: invalid bulk length\r\n"}},
		{"bulk over 512 MB", "*1\r\n$536870913\r\n", []string{"-ERR Protocol error: invalid bulk length\r\n"}},
		{"bad multibulk length", "*abc\r\n", []string{"-ERR Protocol error: invalid multibulk length\r\n"}},
		{"absurd multibulk length", "*2147483648\r\n", []string{"-ERR Protocol error: invalid multibulk length\r\n"}},
		{"expected dollar", "*2\r\n$3\r\nGET\r\n:1\r\n", []string{"-ERR Protocol error: expected '$', got ':'\r\n"}},
		{"replies before the error", "PING\r\n*1\r\n$4\r\nPING\r\n*1\r\nx", []string{"+PONG\r\n", "+PONG\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n"}},
		{"unbalanced quotes", "ECHO \"abc\r\n", []string{"-ERR Protocol error: unbalanced quotes in request\r\n"}},
		{"request over the query buffer limit", "*2\r\n$4\r\nECHO\r\n$200000\r\n" + strings.Repeat("x", 200000), []string{"-ERR Protocol error: request of at least 200025 bytes exceeds the query buffer limit of 131072 bytes\r\n"}},
		{"inline line too long", strings.Repeat("a", maxInlineBytes+10), []string{"-ERR Protocol error: too big inline request\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, s)
			c.send([]byte(tt.in))
			for _, want := range tt.replies {
				if got := c.reply(); got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			}
			expectClosed(t, c)
		})
	}
	// The server is still fine.
	if got := dial(t, s).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after protocol errors: got %q", got)
	}
}

// TestRequestSplitAcrossReads sends a pipeline one byte at a time and in
// odd-sized pieces: every request must be answered once, in order.
func TestRequestSplitAcrossReads(t *testing.T) {
	s := startServer(t, Config{})
	c := dial(t, s)
	var req []byte
	var want strings.Builder
	for i := 0; i < 50; i++ {
		k, v := fmt.Sprintf("key%d", i), strings.Repeat(strconv.Itoa(i%10), i*37)
		req = append(req, encodeArgs("SET", k, v)...)
		req = append(req, encodeArgs("GET", k)...)
		req = append(req, fmt.Sprintf("ECHO %d\r\n", i)...)
		want.WriteString("+OK\r\n" + bulk(v) + bulk(strconv.Itoa(i)))
	}
	go func() {
		for i, size := 0, 1; i < len(req); size = size%97 + 1 {
			end := min(i+size, len(req))
			if _, err := c.nc.Write(req[i:end]); err != nil {
				return
			}
			i = end
		}
	}()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c.r, got); err != nil {
		t.Fatalf("read replies: %v (got %q so far)", err, got)
	}
	if string(got) != want.String() {
		t.Fatalf("replies differ:\ngot  %q\nwant %q", got, want.String())
	}
}

// TestHugePipelineBoundedMemory pipelines far more than the query buffer
// limit while reading the replies slowly: every request is answered in
// order, and no connection buffer grows past its limits.
func TestHugePipelineBoundedMemory(t *testing.T) {
	const limit = minMaxQueryBytes
	s := startServer(t, Config{MaxQueryBytes: limit, MaxReplyBytes: 32 << 10})
	c := dial(t, s)
	c.do("SET", "k", strings.Repeat("v", 1000))
	const n = 20000 // 20000 GETs: 640 KB of requests, 20 MB of replies
	one := encodeArgs("GET", "k")
	want := bulk(strings.Repeat("v", 1000))
	errc := make(chan error, 1)
	go func() {
		batch := bytes.Repeat(one, 1000)
		for i := 0; i < n/1000; i++ {
			if _, err := c.nc.Write(batch); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	time.Sleep(200 * time.Millisecond) // let the server fill its buffers and block
	for i := 0; i < n; i++ {
		if got := c.reply(); got != want {
			t.Fatalf("reply %d: got %q, want the value", i, got[:min(len(got), 40)])
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("write pipeline: %v", err)
	}
	info := c.do("INFO", "clients")
	in := infoInt(t, info, "client_recent_max_input_buffer")
	out := infoInt(t, info, "client_recent_max_output_buffer")
	if in > limit {
		t.Errorf("client_recent_max_input_buffer = %d, want at most the limit %d", in, limit)
	}
	if out > 32<<10+2000 {
		t.Errorf("client_recent_max_output_buffer = %d, want at most MaxReplyBytes plus one reply", out)
	}
}

func TestShutdownCommand(t *testing.T) {
	s, err := New(Config{Bind: "127.0.0.1", Store: memoryStore}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	idle := dial(t, s)
	idle.do("PING")
	c := dial(t, s)
	c.send(encodeArgs("SHUTDOWN"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after SHUTDOWN: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30 s of SHUTDOWN")
	}
	expectClosed(t, c)
	expectClosed(t, idle)
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Errorf("dial after SHUTDOWN succeeded, want the listener closed")
	}
	if err := s.Serve(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after stop: got %v, want ErrClosed", err)
	}
}

// TestParseDispatchAllocs proves the hot path allocates nothing: parsing
// and answering a pipelined batch of GETs (hits and misses) and SETs.
func TestParseDispatchAllocs(t *testing.T) {
	s := startServer(t, Config{ScatterGatherGet: true})
	c := newConn(s, nil)
	t.Cleanup(c.sess.Close)
	var batch []byte
	for i := 0; i < 32; i++ {
		key := fmt.Sprintf("key:%012d", i)
		batch = append(batch, encodeArgs("SET", key, strings.Repeat("x", 96))...)
		batch = append(batch, encodeArgs("GET", key)...)
		batch = append(batch, encodeArgs("GET", key+"-missing")...)
	}
	batch = append(batch, encodeArgs("MGET", "key:000000000001", "key:000000000002")...)
	batch = append(batch, encodeArgs("PING")...)
	run := func() {
		c.r, c.w = 0, copy(c.rbuf, batch)
		c.stages.startBatch(s, c.id) // timed, as serve times it
		c.process()
		c.fillHoles()
		c.stages.written(c.stages.replyReady())
		c.publish() // what flush adds per batch for CLIENT LIST
		if c.r != c.w || c.closing {
			t.Fatalf("batch not fully processed: r=%d w=%d closing=%v out=%q", c.r, c.w, c.closing, c.out)
		}
		c.out = c.out[:0]
	}
	run() // grow the buffers once
	if allocs := testing.AllocsPerRun(50, run); allocs != 0 {
		t.Errorf("parse+dispatch of a %d-command batch: %v allocations, want 0", 3*32+2, allocs)
	}
}
