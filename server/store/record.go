package store

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// Record header: two words, then the expiry word when expiryBit is set.
const (
	headerBytes  = 16
	expiryBytes  = 8
	tombstoneBit = 1 << 63
	// expiryBit: an 8-byte absolute expiry time (Unix milliseconds)
	// follows the header, so only records with a TTL pay for it.
	expiryBit = 1 << 62
	// fillerBit marks the unused end of a page: the next record is at the
	// start of the next page. A log scan needs it because page frames are
	// reused and the bytes after the last record are stale.
	fillerBit = 1 << 61
	// validBit is set in every written header word 0, so that a zero word
	// means "allocated, not yet written" to a log scan (see hlog.allocate).
	validBit = 1 << 60
	// flagMask covers the bits of word 0 above the previous address; the
	// ones between the address and the flags must be zero.
	flagMask = tombstoneBit | expiryBit | fillerBit | validBit
)

// recordBytes is the log space a record takes: header, expiry if any, key
// and value, rounded up to 8 bytes so every header is 8-byte aligned.
func recordBytes(keyBytes, valueBytes uint64, expires bool) uint64 {
	n := headerBytes + keyBytes + valueBytes + 7
	if expires {
		n += expiryBytes
	}
	return n &^ 7
}

// header is a decoded record header.
type header struct {
	prev       uint64
	tombstone  bool
	expires    bool  // an expiry word follows the header
	expireAt   int64 // Unix milliseconds; 0 when !expires
	keyBytes   uint64
	valueBytes uint64
}

// metaBytes is the header plus the expiry word, if any.
func (h *header) metaBytes() uint64 {
	if h.expires {
		return headerBytes + expiryBytes
	}
	return headerBytes
}

func (h *header) size() uint64 { return recordBytes(h.keyBytes, h.valueBytes, h.expires) }

// expired reports whether the record's time has passed at now (Unix ms).
func (h *header) expired(now int64) bool { return h.expires && h.expireAt <= now }

// readHeader decodes the two header words at b; the expiry word, when the
// header announces one, must be read with readExpiry once it is known to be
// in bounds.
func readHeader(b []byte) (h header) {
	h.decode(b)
	return h
}

// decode is readHeader into *h, field by field: the read paths keep h in
// the caller's frame instead of copying a composite (a whole-struct copy
// of fields just stored one by one stalls store-to-load forwarding, which
// slowed a plain GET measurably).
func (h *header) decode(b []byte) {
	w0 := binary.LittleEndian.Uint64(b)
	w1 := binary.LittleEndian.Uint64(b[8:])
	h.prev = w0 & addressMask
	h.tombstone = w0&tombstoneBit != 0
	h.expires = w0&expiryBit != 0
	h.expireAt = 0
	h.keyBytes = w1 & 0xffffffff
	h.valueBytes = w1 >> 32
}

func (h *header) readExpiry(b []byte) {
	if h.expires {
		h.expireAt = int64(binary.LittleEndian.Uint64(b[headerBytes:]))
	}
}

// writeRecord fills rec (recordBytes long, 8-byte aligned) with a record.
// Word 0 is stored last, as a release store: a log scan that loads it
// non-zero sees the whole record (see hlog.allocate, which zeroes it).
// A tombstone has no expiry time.
func writeRecord(rec []byte, prev uint64, tombstone bool, expireAt int64, key, value []byte) {
	if expireAt != 0 {
		writeExpiringRecord(rec, prev, expireAt, key, value)
		return
	}
	writePlainRecord(rec, prev, tombstone, key, value)
}

// writePlainRecord is writeRecord without an expiry time, small enough to
// inline into the write path, where a plain SET spends most of its store
// time (the first touch of the record's cache line).
func writePlainRecord(rec []byte, prev uint64, tombstone bool, key, value []byte) {
	w0 := prev | validBit
	if tombstone {
		w0 |= tombstoneBit
	}
	binary.LittleEndian.PutUint64(rec[8:], uint64(len(key))|uint64(len(value))<<32)
	copy(rec[headerBytes+copy(rec[headerBytes:], key):], value)
	storeWord0(rec, w0)
}

// writeExpiringRecord is writeRecord with an expiry time.
func writeExpiringRecord(rec []byte, prev uint64, expireAt int64, key, value []byte) {
	binary.LittleEndian.PutUint64(rec[8:], uint64(len(key))|uint64(len(value))<<32)
	binary.LittleEndian.PutUint64(rec[headerBytes:], uint64(expireAt))
	k := headerBytes + expiryBytes
	copy(rec[k+copy(rec[k:], key):], value)
	storeWord0(rec, prev|validBit|expiryBit)
}

// word0 is the atomic view of a record's first word in a page buffer.
func word0(rec []byte) *uint64 { return (*uint64)(unsafe.Pointer(&rec[0])) }

// storeWord0 publishes w, as little-endian bytes, in rec's first word,
// after every byte the caller wrote to rec before it (see publishWord).
func storeWord0(rec []byte, w uint64) {
	publishWord(word0(rec), leWord(w))
}

// leWord converts between a native word and its little-endian bytes; on
// the little-endian machines tierbench runs on it is the identity.
func leWord(w uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], w)
	return *(*uint64)(unsafe.Pointer(&b[0]))
}

// checkRecord verifies that a header read at addr describes a record that
// fits in addr's page, so that slicing by it cannot go out of bounds.
func (l *hlog) checkRecord(addr uint64, h header) error {
	if !l.fits(addr, &h) {
		return l.misfit(addr, h.keyBytes, h.valueBytes)
	}
	return nil
}

// fits is checkRecord's test, small enough to inline on the read path. The
// lengths are 32-bit fields, so their sum cannot overflow: one comparison
// covers them.
func (l *hlog) fits(addr uint64, h *header) bool { return addr&l.pageMask+h.size() <= l.pageBytes }

// misfit is checkRecord's error.
func (l *hlog) misfit(addr, keyBytes, valueBytes uint64) error {
	return fmt.Errorf("%w at address %d: key %d B, value %d B do not fit its %d B page", errCorrupt, addr, keyBytes, valueBytes, l.pageBytes)
}

// tooLarge is the error for a record that cannot fit in one page.
func tooLarge(keyBytes, valueBytes int, expires bool, pageBytes uint64) error {
	meta := headerBytes
	if expires {
		meta += expiryBytes
	}
	return fmt.Errorf("%w: %d B header + %d B key + %d B value = %d B, but --page is %d B",
		ErrTooLarge, meta, keyBytes, valueBytes, recordBytes(uint64(keyBytes), uint64(valueBytes), expires), pageBytes)
}

// decodeRecord finds the record at addr in a window of device bytes that
// starts at device offset start. whole is false when the window ends before
// the record does: fetch h.size() bytes and decode again. The bytes come
// from outside the process, so every length is checked before it is used
// to slice.
func (l *hlog) decodeRecord(window []byte, start, addr uint64) (h header, key, value []byte, whole bool, err error) {
	if addr < start || addr-start > uint64(len(window)) || uint64(len(window))-(addr-start) < headerBytes {
		return h, nil, nil, false, fmt.Errorf("store: a %d B window at device offset %d does not hold the header at address %d", len(window), start, addr)
	}
	off := addr - start
	h = readHeader(window[off:])
	if err := l.checkRecord(addr, h); err != nil {
		return h, nil, nil, false, err
	}
	if off+h.size() > uint64(len(window)) {
		return h, nil, nil, false, nil
	}
	h.readExpiry(window[off:])
	k := off + h.metaBytes()
	v := k + h.keyBytes
	return h, window[k:v], window[v : v+h.valueBytes], true, nil
}

// headBytes is the most of a record of a key of keyBytes that an
// existence check needs: the header, an expiry word, and the key.
func headBytes(keyBytes uint64) uint64 { return recordBytes(keyBytes, 0, true) }

// decodeHead is decodeRecord for a reader that needs only the header and
// the key (is the key's newest record live?): the value may lie past the
// window's end. whole is false when the window ends before the key does:
// fetch h.metaBytes()+h.keyBytes bytes and decode again.
func (l *hlog) decodeHead(window []byte, start, addr uint64) (h header, key []byte, whole bool, err error) {
	if addr < start || addr-start > uint64(len(window)) || uint64(len(window))-(addr-start) < headerBytes {
		return h, nil, false, fmt.Errorf("store: a %d B window at device offset %d does not hold the header at address %d", len(window), start, addr)
	}
	off := addr - start
	h = readHeader(window[off:])
	if err := l.checkRecord(addr, h); err != nil {
		return h, nil, false, err
	}
	k := off + h.metaBytes()
	if k+h.keyBytes > uint64(len(window)) {
		return h, nil, false, nil
	}
	h.readExpiry(window[off:])
	return h, window[k : k+h.keyBytes], true, nil
}
