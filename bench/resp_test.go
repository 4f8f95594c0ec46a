package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFillValueIsDigitsAndDiffers(t *testing.T) {
	seen := map[string]uint64{}
	for k := uint64(0); k < 2000; k++ {
		v := make([]byte, 12)
		fillValue(v, k)
		if v[0] < '1' || v[0] > '9' {
			t.Fatalf("value of key %d starts with %q, want a non-zero digit", k, v[0])
		}
		for _, c := range v {
			if c < '0' || c > '9' {
				t.Fatalf("value of key %d = %q, want decimal digits", k, v)
			}
		}
		if other, dup := seen[string(v)]; dup {
			t.Fatalf("keys %d and %d have the same value %q", other, k, v)
		}
		seen[string(v)] = k
	}
}

func TestAppendCommand(t *testing.T) {
	v3 := make([]byte, 3)
	fillValue(v3, 5)
	tests := []struct {
		op   opcode
		keys []uint64
		want string
	}{
		{opGet, []uint64{5}, "*2\r\n$3\r\nGET\r\n$4\r\n0005\r\n"},
		{opIncr, []uint64{5}, "*2\r\n$4\r\nINCR\r\n$4\r\n0005\r\n"},
		{opDel, []uint64{5}, "*2\r\n$3\r\nDEL\r\n$4\r\n0005\r\n"},
		{opPing, []uint64{5}, "*1\r\n$4\r\nPING\r\n"},
		{opSet, []uint64{5}, "*3\r\n$3\r\nSET\r\n$4\r\n0005\r\n$3\r\n" + string(v3) + "\r\n"},
		{opMGet, []uint64{5, 6}, "*3\r\n$4\r\nMGET\r\n$4\r\n0005\r\n$4\r\n0006\r\n"},
	}
	for _, tt := range tests {
		if got := string(appendCommand(nil, tt.op, tt.keys, 4, 3)); got != tt.want {
			t.Errorf("appendCommand(%s) = %q, want %q", tt.op, got, tt.want)
		}
	}
}

// value returns the loaded value of key k as a RESP bulk.
func bulkValue(k uint64, n int) string {
	v := make([]byte, n)
	fillValue(v, k)
	return "$" + itoa(n) + "\r\n" + string(v) + "\r\n"
}

func itoa(n int) string { return string(appendUint(nil, uint64(n))) }

func TestReplyReaderClassifies(t *testing.T) {
	const vl = 5
	tests := []struct {
		name         string
		op           opcode
		input        string
		replies      int
		keysPerReply int
		keys         []uint64
		want         replyCounts
		wantFirstErr string
	}{
		{"GET hits verified", opGet, bulkValue(1, vl) + bulkValue(2, vl), 2, 1, []uint64{1, 2}, replyCounts{hits: 2}, ""},
		{"GET wrong value", opGet, bulkValue(1, vl) + bulkValue(3, vl), 2, 1, []uint64{1, 2}, replyCounts{hits: 2, mismatches: 1}, ""},
		{"GET wrong length", opGet, "$3\r\nabc\r\n", 1, 1, []uint64{1}, replyCounts{hits: 1, mismatches: 1}, ""},
		{"GET miss", opGet, "$-1\r\n_\r\n", 2, 1, []uint64{1, 2}, replyCounts{misses: 2}, ""},
		{"GET error", opGet, "-ERR boom\r\n" + bulkValue(2, vl), 2, 1, []uint64{1, 2}, replyCounts{hits: 1, errors: 1}, "ERR boom"},
		{"MGET mixed", opMGet, "*3\r\n" + bulkValue(1, vl) + "$-1\r\n" + bulkValue(9, vl), 1, 3, []uint64{1, 2, 3}, replyCounts{hits: 2, misses: 1, mismatches: 1}, ""},
		{"MGET null array", opMGet, "*-1\r\n", 1, 3, []uint64{1, 2, 3}, replyCounts{misses: 3}, ""},
		{"MSET ok counts keys", opMSet, "+OK\r\n+OK\r\n", 2, 4, make([]uint64, 8), replyCounts{hits: 8}, ""},
		{"MSET error counts keys", opMSet, "-OOM command not allowed\r\n", 1, 4, make([]uint64, 4), replyCounts{errors: 4}, "OOM command not allowed"},
		{"INCR", opIncr, ":1\r\n:-5\r\n-ERR value is not an integer or out of range\r\n", 3, 1, make([]uint64, 3), replyCounts{hits: 2, errors: 1}, "ERR value is not an integer or out of range"},
		{"DEL", opDel, ":1\r\n:0\r\n", 2, 1, make([]uint64, 2), replyCounts{hits: 1, misses: 1}, ""},
		{"PING", opPing, "+PONG\r\n", 1, 1, make([]uint64, 1), replyCounts{hits: 1}, ""},
	}
	for _, tt := range tests {
		for _, split := range []bool{false, true} {
			var src = iotestReader(tt.input, split)
			rr := newReplyReader(src, 64, tt.op, true, vl)
			if err := rr.replies(tt.replies, tt.keysPerReply, tt.keys); err != nil {
				t.Fatalf("%s (one byte per read %v): %v", tt.name, split, err)
			}
			if rr.counts != tt.want {
				t.Errorf("%s (one byte per read %v): counts %+v, want %+v", tt.name, split, rr.counts, tt.want)
			}
			if rr.firstError != tt.wantFirstErr {
				t.Errorf("%s: first error %q, want %q", tt.name, rr.firstError, tt.wantFirstErr)
			}
			if rr.received != int64(len(tt.input)) {
				t.Errorf("%s: received %d bytes, want %d", tt.name, rr.received, len(tt.input))
			}
		}
	}
}

func iotestReader(s string, oneByte bool) interface{ Read([]byte) (int, error) } {
	if oneByte {
		return iotest.OneByteReader(strings.NewReader(s))
	}
	return strings.NewReader(s)
}

func TestReplyReaderRejects(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
	}{
		{"closed mid-reply", "$5\r\n12", errServerClosed},
		{"closed before reply", "", errServerClosed},
		{"no CR", "+OK\n", errProtocol},
		{"bad length", "$x\r\n", errProtocol},
		{"bulk without CRLF", "$2\r\nabXY", errProtocol},
		{"unknown type", "!oops\r\n", errProtocol},
		{"line too long", "+" + strings.Repeat("a", 40) + "\r\n", errProtocol},
		{"nested array", "*1\r\n*1\r\n", errProtocol},
	}
	for _, tt := range tests {
		rr := newReplyReader(strings.NewReader(tt.input), 32, opMGet, false, 4)
		err := rr.reply([]uint64{1})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// rewinder replays the same bytes for every batch without allocating.
type rewinder struct {
	data []byte
	off  int
}

func (r *rewinder) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func TestReplyReaderAllocatesNothingPerReply(t *testing.T) {
	const n, vl = 256, 16
	var buf bytes.Buffer
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
		if i%5 == 0 {
			buf.WriteString("$-1\r\n")
		} else {
			buf.WriteString(bulkValue(uint64(i), vl))
		}
	}
	src := &rewinder{data: buf.Bytes()}
	rr := newReplyReader(src, 4096, opGet, true, vl)
	allocs := testing.AllocsPerRun(50, func() {
		src.off = 0
		if err := rr.replies(n, 1, keys); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("parsing a batch of %d replies allocated %v times, want 0", n, allocs)
	}
	if rr.counts.mismatches != 0 || rr.counts.misses == 0 {
		t.Errorf("counts %+v: want misses and no mismatches", rr.counts)
	}
}

func FuzzReplyReader(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n$-1\r\n", ":12\r\n", "-ERR x\r\n", "_\r\n", "*-1\r\n"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, opByte uint8) {
		op := opcode(opByte % uint8(len(opNames)))
		rr := newReplyReader(bytes.NewReader(data), 64, op, true, 3)
		keys := []uint64{1, 2, 3}
		for range 8 {
			if err := rr.reply(keys); err != nil {
				if !errors.Is(err, errServerClosed) && !errors.Is(err, errProtocol) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if rr.received > int64(len(data)) || rr.r > rr.w {
				t.Fatalf("reader state out of bounds: received %d of %d bytes, r=%d w=%d", rr.received, len(data), rr.r, rr.w)
			}
		}
	})
}
