package store

import (
	"bytes"
	"testing"
)

func TestDecodeRecord(t *testing.T) {
	l := &hlog{pageBytes: 4096, pageMask: 4095, pageShift: 12}
	rec := make([]byte, 128)
	writeRecord(rec, 777, false, []byte("0123456789abcdef"), bytes.Repeat([]byte("v"), 96))
	window := make([]byte, 1024)
	copy(window[448:], rec) // straddles the 512 B boundary
	h, k, v, whole, err := l.decodeRecord(window, 8192, 8192+448)
	if err != nil || !whole || h.prev != 777 || h.tombstone || string(k) != "0123456789abcdef" || len(v) != 96 {
		t.Errorf("decode: got %+v, %q, %d B value, whole %v, %v", h, k, len(v), whole, err)
	}
	// A window that ends inside the record asks for the rest.
	if h, _, _, whole, err := l.decodeRecord(window[:512], 8192, 8192+448); err != nil || whole || recordBytes(h.keyBytes, h.valueBytes) != 128 {
		t.Errorf("short window: got %+v, whole %v, %v; want whole false and a 128 B record", h, whole, err)
	}
	for _, tc := range []struct {
		name        string
		window      []byte
		start, addr uint64
	}{
		{"address before the window", window, 8192, 100},
		{"address past the window", window, 8192, 8192 + 2000},
		{"header cut", window[:452], 8192, 8192 + 448},
		{"record past its page", window, 8192, 8192 + 4090 - 3000},
	} {
		w := tc.window
		if tc.name == "record past its page" {
			w = make([]byte, 4096)
			writeRecord(w[1090:], 0, false, make([]byte, 3000), make([]byte, 100))
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
	writeRecord(rec, 64, true, []byte("key"), []byte("value"))
	f.Add(rec, uint16(0))
	f.Add(append(make([]byte, 448), rec...), uint16(448))
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
		if uint64(off)+recordBytes(h.keyBytes, h.valueBytes) > uint64(len(window)) {
			t.Fatalf("record of header %+v at %d passes the %d B window", h, off, len(window))
		}
	})
}
