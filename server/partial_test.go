package server

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parsedCommands is what a parser made of a byte stream: the commands in
// order, as strings, and the error that stopped it ("" for none).
type parsedCommands struct {
	cmds []string
	err  string
}

// parseWhole parses in as one buffer with parseCommand.
func parseWhole(in []byte, lim limits) parsedCommands {
	var out parsedCommands
	b := bytes.Clone(in)
	var args [][]byte
	for len(b) > 0 {
		var n int
		var err error
		args, n, _, err = parseCommand(b, args, lim)
		if err != nil {
			out.err = err.Error()
			return out
		}
		if n == 0 {
			return out
		}
		if len(args) > 0 {
			out.cmds = append(out.cmds, joinArgs(args))
		}
		b = b[n:]
	}
	return out
}

// parseSplit feeds in to a partialRequest the way a connection does, in
// pieces of the given sizes, moving the unparsed bytes into a new buffer
// after piece 1, 2, 4, 8, ... (as compaction and growth of the read buffer
// do; after every piece would make long inputs quadratic).
func parseSplit(in []byte, sizes []int, lim limits) parsedCommands {
	var out parsedCommands
	var p partialRequest
	var args [][]byte
	var buf []byte
	for off, i := 0, 0; off < len(in); i++ {
		size := sizes[i%len(sizes)]
		end := min(off+size, len(in))
		if i&(i-1) == 0 {
			buf = bytes.Clone(buf)
		}
		buf = append(buf, in[off:end]...)
		off = end
		for len(buf) > 0 {
			var n int
			var err error
			args, n, _, err = p.next(buf, args, lim)
			if err != nil {
				out.err = err.Error()
				return out
			}
			if n == 0 {
				break
			}
			if len(args) > 0 {
				out.cmds = append(out.cmds, joinArgs(args))
			}
			buf = buf[n:]
		}
	}
	return out
}

func joinArgs(args [][]byte) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(0)
		}
		b.Write(a)
	}
	return b.String()
}

func equalParsed(a, b parsedCommands) bool {
	if len(a.cmds) != len(b.cmds) {
		return false
	}
	for i := range a.cmds {
		if a.cmds[i] != b.cmds[i] {
			return false
		}
	}
	// Over-long count lines are refused as "too big" as soon as 64 KiB
	// without a line end are buffered, so the wording depends on how
	// the bytes arrive, as in Redis.
	if strings.Contains(a.err, "too big") || strings.Contains(b.err, "too big") {
		return (a.err == "") == (b.err == "")
	}
	return a.err == b.err
}

func TestPartialRequestSplits(t *testing.T) {
	var stream []byte
	for i := 0; i < 20; i++ {
		stream = append(stream, encodeArgs("SET", "key"+strings.Repeat("k", i), strings.Repeat("v", i*53))...)
		stream = append(stream, encodeArgs("MGET", "a", "", "c")...)
		stream = append(stream, "PING\r\n"...)
		stream = append(stream, "*0\r\n"...)
	}
	stream = append(stream, "*2\r\n$3\r\nGET\r\n$2\r\nabc\r\n"...) // malformed last
	want := parseWhole(stream, defaultLimits)
	if want.err != "Protocol error: bulk string not terminated by CRLF" || len(want.cmds) != 60 {
		t.Fatalf("whole stream: %d commands, error %q; want 60 and the CRLF error", len(want.cmds), want.err)
	}
	for _, sizes := range [][]int{{1}, {2}, {3, 7, 1}, {13}, {64}, {1000}, {len(stream)}} {
		if got := parseSplit(stream, sizes, defaultLimits); !equalParsed(got, want) {
			t.Errorf("pieces of %v bytes: got %d commands, error %q; want %d, %q", sizes, len(got.cmds), got.err, len(want.cmds), want.err)
		}
	}
}

// TestPartialRequestResumes shows that a request received in pieces is
// not parsed again from its start: after the first pieces, the state holds
// the count, the arguments so far and the length of the bulk in progress.
func TestPartialRequestResumes(t *testing.T) {
	req := encodeArgs("MSET", "k1", "value-one", "k2", "value-two")
	var p partialRequest
	cut := bytes.Index(req, []byte("value-two")) + 3 // inside the last bulk
	args, n, need, err := p.next(req[:cut], nil, defaultLimits)
	if err != nil || n != 0 {
		t.Fatalf("first part: n=%d err=%v, want incomplete", n, err)
	}
	if p.count != 5 || len(p.spans) != 4 || p.bulk != len("value-two") || need != len(req) {
		t.Fatalf("state after the first part: count %d, %d arguments, bulk %d, need %d; want 5, 4, 9, %d", p.count, len(p.spans), p.bulk, need, len(req))
	}
	// Corrupting the bytes already parsed must not matter: they are not read again.
	moved := append([]byte(strings.Repeat("#", cut)), req[cut:]...)
	copy(moved[p.spans[3][0]:], req[p.spans[3][0]:p.spans[3][1]]) // except the arguments themselves
	copy(moved[p.spans[0][0]:], "MSET")
	copy(moved[p.spans[1][0]:], "k1")
	copy(moved[p.spans[2][0]:], "value-one")
	copy(moved[p.bulkAt:], req[p.bulkAt:cut])
	args, n, _, err = p.next(moved, args, defaultLimits)
	if err != nil || n != len(req) || joinArgs(args) != "MSET\x00k1\x00value-one\x00k2\x00value-two" {
		t.Fatalf("resumed: n=%d err=%v args=%q; want the whole request", n, err, args)
	}
	if p.count != 0 || len(p.spans) != 0 {
		t.Errorf("state after the request: count %d, %d arguments; want reset", p.count, len(p.spans))
	}
}

// TestPartialRequestAllocs: resuming allocates nothing once the slices
// have grown.
func TestPartialRequestAllocs(t *testing.T) {
	req := encodeArgs("SET", "key:000000000001", strings.Repeat("x", 96))
	var p partialRequest
	var args [][]byte
	run := func() {
		for cut := 1; cut < len(req); cut += 7 {
			args, _, _, _ = p.next(req[:cut], args, defaultLimits)
		}
		var n int
		args, n, _, _ = p.next(req, args, defaultLimits)
		if n != len(req) {
			t.Fatalf("request not complete: n=%d", n)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
		t.Errorf("parsing a request in pieces: %v allocations, want 0", allocs)
	}
}

// FuzzParseSplit: whatever the bytes and wherever they are cut, the
// resumable parser finds the same commands and the same error as one
// parse of the whole buffer.
func FuzzParseSplit(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "seeds", "*.resp"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint64(len(b)))
	}
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$5\r\nhello\r\nPING\r\n"), uint64(1))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		sizes := make([]int, 1+rng.IntN(8))
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(32)
		}
		for _, lim := range []limits{defaultLimits, unauthLimits} {
			want := parseWhole(in, lim)
			got := parseSplit(in, sizes, lim)
			if !equalParsed(got, want) {
				t.Fatalf("pieces of %v bytes: got %q, error %q; want %q, error %q", sizes, got.cmds, got.err, want.cmds, want.err)
			}
			var pe *ProtocolError
			if got.err != "" && !errors.As(errors.New(got.err), &pe) && !strings.HasPrefix(got.err, "Protocol error: ") {
				t.Fatalf("error %q is not a protocol error", got.err)
			}
		}
	})
}
