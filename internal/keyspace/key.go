package keyspace

// Digits is the number of decimal digits of v (1 for 0): the shortest key
// length that can spell key index v.
func Digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// AppendKey appends key index k as a decimal number zero-padded to width
// bytes. The caller guarantees Digits(k) <= width; it does not allocate
// when dst has room for width more bytes.
func AppendKey(dst []byte, k uint64, width int) []byte {
	start := len(dst)
	for range width {
		dst = append(dst, '0')
	}
	PutKey(dst[start:], k)
	return dst
}

// PutKey writes key index k into dst as a decimal number zero-padded to
// len(dst), in place, for requests whose layout is built once and whose key
// bytes are rewritten per op. The caller guarantees Digits(k) <= len(dst).
func PutKey(dst []byte, k uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + k%10)
		k /= 10
	}
}

// Split is the half-open range [lo, hi) of key indices that part i of
// parts writes when n keys are loaded in parallel. lo = n*i/parts gives
// every key to exactly one part, the remainder of an uneven split included.
func Split(n int64, parts, i int) (lo, hi int64) {
	return n * int64(i) / int64(parts), n * int64(i+1) / int64(parts)
}
