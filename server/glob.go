package server

// globMatch reports whether s matches the glob pattern p as Redis's KEYS
// and SCAN MATCH read it: * any run of bytes, ? one byte, [abc] [a-z] [^x]
// a set (an unterminated set runs to the end of the pattern), \ quotes the
// next byte. Its time is linear in len(p) × len(s).
func globMatch(p, s []byte) bool {
	pi, si := 0, 0
	starP, starS := -1, 0 // after the last *, and where its match ends
	for si < len(s) {
		if pi < len(p) {
			if p[pi] == '*' {
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				if pi == len(p) {
					return true
				}
				starP, starS = pi, si
				continue
			}
			if n, ok := globOne(p[pi:], s[si]); ok {
				pi += n
				si++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last * take one more byte and try again from there.
		starS++
		pi, si = starP, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// globOne matches c against the one-byte element at the start of p (not a
// *) and returns the element's length.
func globOne(p []byte, c byte) (int, bool) {
	switch p[0] {
	case '?':
		return 1, true
	case '\\':
		if len(p) >= 2 {
			return 2, p[1] == c
		}
	case '[':
		return globSet(p, c)
	}
	return 1, p[0] == c
}

func globSet(p []byte, c byte) (int, bool) {
	i := 1
	not := i < len(p) && p[i] == '^'
	if not {
		i++
	}
	match := false
	for {
		if i >= len(p) {
			i = len(p) - 1 // unterminated: the set takes the rest
			break
		}
		if p[i] == '\\' && len(p)-i >= 2 {
			i++
			match = match || p[i] == c
		} else if p[i] == ']' {
			break
		} else if len(p)-i >= 3 && p[i+1] == '-' {
			lo, hi := p[i], p[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			i += 2
			match = match || (lo <= c && c <= hi)
		} else {
			match = match || p[i] == c
		}
		i++
	}
	return i + 1, match != not
}
