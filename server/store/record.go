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
