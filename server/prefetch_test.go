package server

import (
	"bytes"
	"testing"
)

func TestNextGetKey(t *testing.T) {
	for _, tt := range []struct {
		in   string
		key  string
		size int
	}{
		{"*2\r\n$3\r\nGET\r\n$4\r\nkey1\r\n", "key1", 23},
		{"*2\r\n$3\r\nget\r\n$0\r\n\r\n*2\r\n", "", 19},
		{"*2\r\n$3\r\ngEt\r\n$16\r\n0000000000000042\r\nrest", "0000000000000042", 36},
		{"*2\r\n$3\r\nGET\r\n$4\r\nkey1\r", "", 0},   // not complete
		{"*2\r\n$3\r\nGET\r\n$5\r\nkey1\r\n", "", 0}, // length says more
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey1\r\n", "", 0}, // and less
		{"*2\r\n$3\r\nSET\r\n$4\r\nkey1\r\n", "", 0},
		{"*3\r\n$3\r\nGET\r\n$4\r\nkey1\r\n", "", 0},
		{"GET key1\r\n", "", 0},
		{"*2\r\n$3\r\nGET\r\n$04\r\nkey1\r\n", "", 0}, // the parser refuses a leading zero
		{"*2\r\n$3\r\nGET\r\n$\r\n\r\n", "", 0},
		{"*2\r\n$3\r\nGET\r\n$99999999999\r\nk\r\n", "", 0},
	} {
		key, n := nextGetKey([]byte(tt.in))
		if n != tt.size || string(key) != tt.key {
			t.Errorf("nextGetKey(%q): got (%q, %d), want (%q, %d)", tt.in, key, n, tt.key, tt.size)
		}
	}
}

// FuzzNextGetKey checks the look-ahead against the real parser: whatever
// nextGetKey takes for a GET, the parser reads as a GET of the same key,
// spanning the same bytes.
func FuzzNextGetKey(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$4\r\nkey1\r\n"))
	f.Add([]byte("*2\r\n$3\r\nget\r\n$0\r\n\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$04\r\nkey1\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		key, n := nextGetKey(in)
		if n == 0 {
			return
		}
		var p partialRequest
		args, m, _, err := p.next(in, nil, defaultLimits)
		if err != nil || m != n || len(args) != 2 || !bytes.EqualFold(args[0], []byte("get")) || !bytes.Equal(args[1], key) {
			t.Fatalf("nextGetKey(%q) = (%q, %d), the parser: (%q, %d, %v)", in, key, n, args, m, err)
		}
	})
}
