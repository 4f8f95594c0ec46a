package store

import (
	"encoding/binary"
	"fmt"
)

const (
	headerBytes  = 16
	tombstoneBit = 1 << 63
)

// recordBytes is the log space a record takes: header, key and value,
// rounded up to 8 bytes so every header is 8-byte aligned.
func recordBytes(keyBytes, valueBytes uint64) uint64 {
	return (headerBytes + keyBytes + valueBytes + 7) &^ 7
}

// header is a decoded record header.
type header struct {
	prev       uint64
	tombstone  bool
	keyBytes   uint64
	valueBytes uint64
}

func readHeader(b []byte) header {
	w0 := binary.LittleEndian.Uint64(b)
	w1 := binary.LittleEndian.Uint64(b[8:])
	return header{prev: w0 & addressMask, tombstone: w0&tombstoneBit != 0, keyBytes: w1 & 0xffffffff, valueBytes: w1 >> 32}
}

func writeRecord(rec []byte, prev uint64, tombstone bool, key, value []byte) {
	w0 := prev
	if tombstone {
		w0 |= tombstoneBit
	}
	binary.LittleEndian.PutUint64(rec, w0)
	binary.LittleEndian.PutUint64(rec[8:], uint64(len(key))|uint64(len(value))<<32)
	n := copy(rec[headerBytes:], key)
	copy(rec[headerBytes+n:], value)
}

// checkRecord verifies that a header read at addr describes a record that
// fits in addr's page, so that slicing by it cannot go out of bounds.
func (l *hlog) checkRecord(addr uint64, h header) error {
	if h.keyBytes > l.pageBytes || h.valueBytes > l.pageBytes || addr&l.pageMask+recordBytes(h.keyBytes, h.valueBytes) > l.pageBytes {
		return fmt.Errorf("%w at address %d: key %d B, value %d B do not fit its %d B page", errCorrupt, addr, h.keyBytes, h.valueBytes, l.pageBytes)
	}
	return nil
}

// tooLarge is the error for a record that cannot fit in one page.
func tooLarge(keyBytes, valueBytes int, pageBytes uint64) error {
	return fmt.Errorf("%w: %d B header + %d B key + %d B value = %d B, but --page is %d B",
		ErrTooLarge, headerBytes, keyBytes, valueBytes, recordBytes(uint64(keyBytes), uint64(valueBytes)), pageBytes)
}

// decodeRecord finds the record at addr in a window of device bytes that
// starts at device offset start. whole is false when the window ends before
// the record does: fetch recordBytes(h.keyBytes, h.valueBytes) and decode
// again. The bytes come from outside the process, so every length is
// checked before it is used to slice.
func (l *hlog) decodeRecord(window []byte, start, addr uint64) (h header, key, value []byte, whole bool, err error) {
	if addr < start || addr-start > uint64(len(window)) || uint64(len(window))-(addr-start) < headerBytes {
		return h, nil, nil, false, fmt.Errorf("store: a %d B window at device offset %d does not hold the header at address %d", len(window), start, addr)
	}
	off := addr - start
	h = readHeader(window[off:])
	if err := l.checkRecord(addr, h); err != nil {
		return h, nil, nil, false, err
	}
	if off+recordBytes(h.keyBytes, h.valueBytes) > uint64(len(window)) {
		return h, nil, nil, false, nil
	}
	k := off + headerBytes
	v := k + h.keyBytes
	return h, window[k:v], window[v : v+h.valueBytes], true, nil
}
