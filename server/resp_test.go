package server

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		lim      limits
		wantArgs []string
		wantN    int // -1: len(in)
		wantNeed int
		wantErr  string
	}{
		{name: "array", in: "*2\r\n$3\r\nGET\r\n$1\r\na\r\n", wantArgs: []string{"GET", "a"}, wantN: -1},
		{name: "array followed by more", in: "*1\r\n$4\r\nPING\r\n*1\r\n", wantArgs: []string{"PING"}, wantN: 14},
		{name: "empty bulk", in: "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", wantArgs: []string{"ECHO", ""}, wantN: -1},
		{name: "binary bulk", in: "*1\r\n$4\r\n\r\n\x00\xff\r\n", wantArgs: []string{"\r\n\x00\xff"}, wantN: -1},
		{name: "zero count skipped", in: "*0\r\n", wantArgs: []string{}, wantN: -1},
		{name: "negative count skipped", in: "*-1\r\n", wantArgs: []string{}, wantN: -1},
		{name: "incomplete count", in: "*2\r", wantArgs: []string{}, wantN: 0},
		{name: "incomplete bulk header", in: "*2\r\n$3\r\nGET\r\n$1", wantArgs: []string{}, wantN: 0},
		{name: "incomplete bulk data", in: "*1\r\n$10\r\nabc", wantArgs: []string{}, wantN: 0, wantNeed: 9 + 10 + 2},
		{name: "incomplete before next bulk", in: "*2\r\n$1\r\na\r\n", wantArgs: []string{}, wantN: 0, wantNeed: 12},
		{name: "bad count", in: "*x\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "count with leading zero", in: "*01\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "bulk length with leading zero", in: "*1\r\n$01\r\na\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk length 00", in: "*1\r\n$00\r\n\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk length of 18 digits", in: "*1\r\n$100000000000000000\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk length of 19 digits", in: "*1\r\n$1000000000000000000\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk length CR without LF", in: "*1\r\n$1\rx", wantErr: "Protocol error: invalid bulk length"},
		{name: "count with plus", in: "*+1\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "count too big", in: "*1073741825\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "count above cap", in: "*" + strconv.Itoa(maxArgs+1) + "\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "count overflows int64", in: "*99999999999999999999\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "count without CR", in: "*1\n", wantErr: "Protocol error: count line not terminated by CRLF"},
		{name: "expected dollar", in: "*1\r\nx3\r\n", wantErr: "Protocol error: expected '$', got 'x'"},
		{name: "expected dollar control byte", in: "*1\r\n\x01", wantErr: `Protocol error: expected '$', got '\x01'`},
		{name: "bad bulk length", in: "*1\r\n$x\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "negative bulk length", in: "*1\r\n$-1\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk over 512MB", in: "*1\r\n$536870913\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk of 512MB is waited for", in: "*1\r\n$536870912\r\n", wantArgs: []string{}, wantN: 0, wantNeed: 4 + 12 + 536870912 + 2},
		{name: "bulk not terminated", in: "*1\r\n$1\r\nab\r\n", wantErr: "Protocol error: bulk string not terminated by CRLF"},
		{name: "unauthenticated count", in: "*11\r\n", lim: unauthLimits, wantErr: "Protocol error: unauthenticated multibulk length"},
		{name: "unauthenticated bulk", in: "*1\r\n$16385\r\n", lim: unauthLimits, wantErr: "Protocol error: unauthenticated bulk length"},
		{name: "unauthenticated small ok", in: "*2\r\n$4\r\nAUTH\r\n$1\r\np\r\n", lim: unauthLimits, wantArgs: []string{"AUTH", "p"}, wantN: -1},
		{name: "count line too long", in: "*" + strings.Repeat("1", maxInlineBytes+1), wantErr: "Protocol error: too big mbulk count string"},
		{name: "bulk line too long", in: "*1\r\n$" + strings.Repeat("1", maxInlineBytes+1), wantErr: "Protocol error: too big bulk count string"},

		{name: "inline", in: "SET a b\r\n", wantArgs: []string{"SET", "a", "b"}, wantN: -1},
		{name: "inline LF only", in: "PING\n", wantArgs: []string{"PING"}, wantN: -1},
		{name: "inline spaces", in: "  GET \t  key  \r\n", wantArgs: []string{"GET", "key"}, wantN: -1},
		{name: "inline empty line", in: "\r\n", wantArgs: []string{}, wantN: -1},
		{name: "inline incomplete", in: "GET a", wantArgs: []string{}, wantN: 0},
		{name: "inline double quotes", in: `SET "a b" "x\ny\x41\"\\"` + "\r\n", wantArgs: []string{"SET", "a b", "x\nyA\"\\"}, wantN: -1},
		{name: "inline single quotes", in: `ECHO 'it\'s "raw" \n'` + "\n", wantArgs: []string{"ECHO", `it's "raw" \n`}, wantN: -1},
		{name: "inline empty quotes", in: `ECHO ""` + "\n", wantArgs: []string{"ECHO", ""}, wantN: -1},
		{name: "inline quote mid word", in: `ECHO ab"c d"` + "\n", wantArgs: []string{"ECHO", "abc d"}, wantN: -1},
		{name: "inline unbalanced", in: `ECHO "abc` + "\n", wantErr: "Protocol error: unbalanced quotes in request"},
		{name: "inline text after quote", in: `ECHO "a"b` + "\n", wantErr: "Protocol error: unbalanced quotes in request"},
		{name: "inline single unbalanced", in: `ECHO 'a` + "\n", wantErr: "Protocol error: unbalanced quotes in request"},
		{name: "inline too long", in: strings.Repeat("a", maxInlineBytes+1), wantErr: "Protocol error: too big inline request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim
			if lim.maxArgs == 0 {
				lim = defaultLimits
			}
			b := []byte(tt.in)
			args, n, need, err := parseCommand(b, nil, lim)
			if tt.wantErr != "" {
				var pe *ProtocolError
				if !errors.As(err, &pe) || err.Error() != tt.wantErr {
					t.Fatalf("parseCommand(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseCommand(%q) error = %v", tt.in, err)
			}
			wantN := tt.wantN
			if wantN < 0 {
				wantN = len(tt.in)
			}
			if n != wantN {
				t.Errorf("parseCommand(%q) n = %d, want %d", tt.in, n, wantN)
			}
			if need != tt.wantNeed {
				t.Errorf("parseCommand(%q) need = %d, want %d", tt.in, need, tt.wantNeed)
			}
			if n > 0 {
				got := make([]string, len(args))
				for i, a := range args {
					got[i] = string(a)
				}
				if strings.Join(got, "|") != strings.Join(tt.wantArgs, "|") || len(got) != len(tt.wantArgs) {
					t.Errorf("parseCommand(%q) args = %q, want %q", tt.in, got, tt.wantArgs)
				}
			}
		})
	}
}

// TestParseCommandNoCopy checks that arguments alias the input buffer and
// that parsing a pipelined batch allocates nothing once args has grown.
func TestParseCommandNoCopy(t *testing.T) {
	var batch []byte
	for i := 0; i < 64; i++ {
		batch = append(batch, "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n"...)
		batch = append(batch, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$5\r\nhello\r\n"...)
	}
	args, n, _, err := parseCommand(batch, nil, defaultLimits)
	if err != nil || n == 0 {
		t.Fatalf("parseCommand: n=%d err=%v", n, err)
	}
	if &args[1][0] != &batch[18] {
		t.Fatalf("argument 1 is a copy, want a sub-slice of the read buffer")
	}
	allocs := testing.AllocsPerRun(100, func() {
		for b := batch; len(b) > 0; {
			args, n, _, err = parseCommand(b, args, defaultLimits)
			if err != nil || n == 0 {
				t.Fatalf("parseCommand: n=%d err=%v", n, err)
			}
			b = b[n:]
		}
	})
	if allocs != 0 {
		t.Errorf("parsing a batch of 128 commands: %v allocations, want 0", allocs)
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"123456789", 123456789, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1a", 0, false},
		{"123456789012345678901", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseInt([]byte(tt.in))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestReplyWriters(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"simple", appendSimple(nil, "PONG"), "+PONG\r\n"},
		{"ok", appendOK(nil), "+OK\r\n"},
		{"error", appendError(nil, "ERR bad"), "-ERR bad\r\n"},
		{"error with newlines", appendError(nil, "ERR a\r\nb"), "-ERR a  b\r\n"},
		{"int", appendInt(nil, -42), ":-42\r\n"},
		{"bulk", appendBulk(nil, []byte("hi")), "$2\r\nhi\r\n"},
		{"bulk empty", appendBulk(nil, nil), "$0\r\n\r\n"},
		{"bulk string", appendBulkString(nil, "abc"), "$3\r\nabc\r\n"},
		{"null", appendNull(nil), "$-1\r\n"},
		{"array", appendArray(nil, 3), "*3\r\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// encodeCommand writes args as a RESP array of bulk strings, as clients do.
func encodeCommand(args ...[]byte) []byte {
	b := appendArray(nil, len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

// FuzzParse feeds arbitrary bytes to the request parser: it must never
// panic, never claim more bytes than it was given, return arguments that lie
// inside the input, and a RESP array re-encoded from what it parsed must
// parse back to the same arguments.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "seeds", "*.resp"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\na\r\n"))
	f.Add([]byte("SET \"a\\x41\" 'b'\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		for _, lim := range []limits{defaultLimits, unauthLimits} {
			b := bytes.Clone(orig)
			var args [][]byte
			for len(b) > 0 {
				var n int
				var err error
				args, n, _, err = parseCommand(b, args, lim)
				if err != nil {
					var pe *ProtocolError
					if !errors.As(err, &pe) {
						t.Fatalf("error %v is not a *ProtocolError", err)
					}
					break
				}
				if n == 0 {
					break
				}
				if n > len(b) {
					t.Fatalf("consumed %d bytes of %d", n, len(b))
				}
				for _, a := range args {
					if len(a) > 0 && !within(a, b[:n]) {
						t.Fatalf("argument %q does not alias the consumed input", a)
					}
				}
				if len(args) > 0 {
					enc := encodeCommand(args...)
					back, m, _, err := parseCommand(bytes.Clone(enc), nil, defaultLimits)
					if err != nil || m != len(enc) || len(back) != len(args) {
						t.Fatalf("re-encoded %q: n=%d err=%v args=%d, want n=%d args=%d", enc, m, err, len(back), len(enc), len(args))
					}
					for i := range back {
						if !bytes.Equal(back[i], args[i]) {
							t.Fatalf("re-encoded argument %d = %q, want %q", i, back[i], args[i])
						}
					}
				}
				b = b[n:]
			}
		}
	})
}

// within reports whether a lies inside b's backing array range.
func within(a, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	p := uintptr(unsafe.Pointer(&a[0]))
	return p >= lo && p+uintptr(len(a)) <= hi
}
