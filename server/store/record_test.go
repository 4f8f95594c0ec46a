package store

import (
	"bytes"
	"testing"
)

func TestDecodeRecord(t *testing.T) {
	l := &hlog{pageBytes: 4096, pageMask: 4095, pageShift: 12}
	for _, tc := range []struct {
		name      string
		expireAt  int64
		recBytes  uint64
		tombstone bool
	}{
		{"no expiry", 0, 128, false},
		{"expiry", 1767225600123, 136, false},
		{"tombstone", 0, 128, true},
	} {
		rec := make([]byte, tc.recBytes)
		if got := recordBytes(16, 96, tc.expireAt != 0); got != tc.recBytes {
			t.Fatalf("%s: recordBytes got %d, want %d", tc.name, got, tc.recBytes)
		}
		writeRecord(rec, 777, tc.tombstone, tc.expireAt, []byte("0123456789abcdef"), bytes.Repeat([]byte("v"), 96))
		window := make([]byte, 1024)
		copy(window[448:], rec) // straddles the 512 B boundary
		h, k, v, whole, err := l.decodeRecord(window, 8192, 8192+448)
		if err != nil || !whole || h.prev != 777 || h.tombstone != tc.tombstone || h.expires != (tc.expireAt != 0) || h.expireAt != tc.expireAt ||
			string(k) != "0123456789abcdef" || len(v) != 96 || v[95] != 'v' {
			t.Errorf("%s: decode got %+v, %q, %d B value, whole %v, %v", tc.name, h, k, len(v), whole, err)
		}
		// A window that ends inside the record asks for the rest.
		if h, _, _, whole, err := l.decodeRecord(window[:512], 8192, 8192+448); err != nil || whole || h.size() != tc.recBytes {
			t.Errorf("%s: short window got %+v, whole %v, %v; want whole false and a %d B record", tc.name, h, whole, err, tc.recBytes)
		}
	}
	window := make([]byte, 1024)
	writeRecord(window[448:], 777, false, 0, []byte("0123456789abcdef"), bytes.Repeat([]byte("v"), 96))
	for _, tc := range []struct {
		name        string
		window      []byte
		start, addr uint64
	}{
		{"address before the window", window, 8192, 100},
		{"address past the window", window, 8192, 8192 + 2000},
		{"header cut", window[:452], 8192, 8192 + 448},
		{"record past its page", window, 8192, 8192 + 4090 - 3000},
		{"expiry word past its page", window, 8192, 8192 + 4096 - 120},
	} {
		w := tc.window
		switch tc.name {
		case "record past its page":
			w = make([]byte, 4096)
			writeRecord(w[1090:], 0, false, 0, make([]byte, 3000), make([]byte, 100))
		case "expiry word past its page":
			// 16 + 96 B fit the page's last 120 B; the expiry word does not.
			w = make([]byte, 4096)
			writeRecord(w[4096-120:], 0, false, 5, make([]byte, 8), make([]byte, 96))
		}
		if _, _, _, _, err := l.decodeRecord(w, tc.start, tc.addr); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
}

// FuzzDecodeRecord feeds arbitrary device bytes to the record decoder: it
// must never slice out of bounds, and what it returns must lie in the window.
func FuzzDecodeRecord(f *testing.F) {
	rec := make([]byte, 128)
	writeRecord(rec, 64, true, 0, []byte("key"), []byte("value"))
	f.Add(rec, uint16(0))
	f.Add(append(make([]byte, 448), rec...), uint16(448))
	withExpiry := make([]byte, 136)
	writeRecord(withExpiry, 4096, false, 1767225600123, []byte("key:000000000001"), bytes.Repeat([]byte("v"), 96))
	f.Add(withExpiry, uint16(0))
	f.Add(withExpiry[:120], uint16(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint16(0))
	l := &hlog{pageBytes: 4096, pageMask: 4095, pageShift: 12}
	f.Fuzz(func(t *testing.T, window []byte, off uint16) {
		h, k, v, whole, err := l.decodeRecord(window, 4096, 4096+uint64(off))
		if err != nil || !whole {
			return
		}
		if uint64(len(k)) != h.keyBytes || uint64(len(v)) != h.valueBytes {
			t.Fatalf("got %d B key, %d B value for header %+v", len(k), len(v), h)
		}
		if uint64(off)+h.size() > uint64(len(window)) {
			t.Fatalf("record of header %+v at %d passes the %d B window", h, off, len(window))
		}
		if !h.expires && h.expireAt != 0 {
			t.Fatalf("header %+v: an expiry time without the expiry bit", h)
		}
	})
}
