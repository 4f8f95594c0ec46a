package procfs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseProcNetTCP(t *testing.T) {
	// The fixtures were taken on a little-endian host, as the kernel
	// prints them there.
	tests := []struct {
		file string
		want []string // "addr inode"
	}{
		{"tcp", []string{"0.0.0.0:2024 1061", "127.0.0.1:6379 64422", "192.168.0.2:22 2210"}},
		{"tcp6", []string{"[::]:8080 3301", "[::1]:6667 3302", "127.0.0.1:6668 3303"}},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", "net", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := ParseNetTCP(data)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, fmt.Sprintf("%s %d", e, e.Inode))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q (LISTEN entries only)", tt.file, got, tt.want)
		}
	}
	bad, _ := os.ReadFile(filepath.Join("testdata", "net", "tcp-bad"))
	for _, in := range []string{string(bad),
		"sl\n0: 0100007F:18E 00000000:0000 0A a b c d e 1\n",
		"sl\n0: 0100007G:18EB 00000000:0000 0A a b c d e 1\n",
		"sl\n0: 0100007F:18EB 00000000:0000 0A a b c d e x\n"} {
		if _, err := ParseNetTCP([]byte(in)); err == nil {
			t.Errorf("ParseNetTCP(%q): got nil error, want one naming the line", in)
		}
	}
}

func TestListenMatches(t *testing.T) {
	addr := func(s string) *net.TCPAddr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	tests := []struct {
		entry Listen
		addr  string
		want  bool
	}{
		{Listen{IP: net.IPv4(127, 0, 0, 1), Port: 6379}, "127.0.0.1:6379", true},
		{Listen{IP: net.IPv4(127, 0, 0, 1), Port: 6379}, "127.0.0.1:6380", false},
		{Listen{IP: net.IPv4(127, 0, 0, 1), Port: 6379}, "127.0.0.2:6379", false},
		{Listen{IP: net.IPv4zero, Port: 6379}, "127.0.0.1:6379", true},
		{Listen{IP: net.IPv4zero, Port: 6379}, "[::1]:6379", false},
		{Listen{IP: net.IPv6unspecified, Port: 6379}, "127.0.0.1:6379", true},
		{Listen{IP: net.IPv6unspecified, Port: 6379}, "[::1]:6379", true},
		{Listen{IP: net.IPv6loopback, Port: 6379}, "127.0.0.1:6379", false},
	}
	for _, tt := range tests {
		if got := tt.entry.Matches(addr(tt.addr)); got != tt.want {
			t.Errorf("%s matches %s: got %v, want %v", tt.entry, tt.addr, got, tt.want)
		}
	}
}

func addFiles(f *testing.F, names ...string) {
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join("testdata", n)); err == nil {
			f.Add(b)
		}
	}
}

func FuzzParseProcNetTCP(f *testing.F) {
	addFiles(f, "net/tcp", "net/tcp6", "net/tcp-bad")
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseNetTCP(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Port < 0 || e.Port > 65535 || (len(e.IP) != 4 && len(e.IP) != 16) {
				t.Fatalf("accepted a bad entry: %+v", e)
			}
		}
	})
}

func FuzzParseSocketLink(f *testing.F) {
	for _, s := range []string{"socket:[12345]", "pipe:[1]", "socket:[]", "socket:[18446744073709551616]", "/dev/null"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, link string) {
		n, ok := ParseSocketLink(link)
		if ok && (!strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]")) {
			t.Fatalf("ParseSocketLink(%q) = %d, true; want only socket:[N] accepted", link, n)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a) b) c) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9876 1 1\n"))
	f.Add([]byte("1 (x) Z 0 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStat(data)
		if err == nil && (st.PPID < 0 || st.PGRP < 0) {
			t.Fatalf("accepted %+v", st)
		}
	})
}
