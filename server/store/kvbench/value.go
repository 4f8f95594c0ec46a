package kvbench

// fillValue writes key index k's value: n bytes of a pattern drawn from k,
// so a read can be checked without remembering anything.
func fillValue(dst []byte, k uint64) {
	x := k*0x9e3779b97f4a7c15 + 1
	for i := range dst {
		if i%8 == 0 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		dst[i] = 'a' + byte(x>>(8*(i%8)))%26
	}
}
