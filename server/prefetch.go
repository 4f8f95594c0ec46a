package server

// maxPrefetchGets bounds how far process looks ahead: 512 buckets are 32
// KiB of index lines, about what the first-level cache keeps until their
// GETs come.
const maxPrefetchGets = 512

// prefetchGets has the session start loading the index buckets of the GETs
// at the front of buf, before process answers the first of them, so that
// the buckets' memory misses overlap (see store.Session.PrefetchKey). It is
// only a hint: it stops at the first request that is not a GET in the form
// clients send it, or is not complete yet.
func (c *conn) prefetchGets(buf []byte) {
	for range maxPrefetchGets {
		key, n := nextGetKey(buf)
		if n == 0 {
			break
		}
		c.sess.PrefetchKey(key)
		buf = buf[n:]
	}
	c.sess.Prefetch()
}

// nextGetKey recognises a GET at the start of buf in the array form every
// client library sends, *2\r\n$3\r\nGET\r\n$<len>\r\n<key>\r\n (the command
// name in any case), and returns its key and length in bytes; n is 0 for
// anything else, or for a GET not complete in buf. It never reads past buf.
func nextGetKey(buf []byte) (key []byte, n int) {
	const head = "*2\r\n$3\r\n"
	if len(buf) < len(head)+5+4 || string(buf[:len(head)]) != head {
		return nil, 0
	}
	p := len(head)
	if buf[p]|0x20 != 'g' || buf[p+1]|0x20 != 'e' || buf[p+2]|0x20 != 't' || buf[p+3] != '\r' || buf[p+4] != '\n' || buf[p+5] != '$' {
		return nil, 0
	}
	p += 6
	if buf[p] == '0' && p+1 < len(buf) && buf[p+1] != '\r' {
		return nil, 0 // a leading zero, which the parser refuses
	}
	size, digits := 0, p
	for ; p < len(buf) && buf[p] >= '0' && buf[p] <= '9'; p++ {
		size = size*10 + int(buf[p]-'0')
		if size > 1<<20 {
			return nil, 0 // no key this long is worth a prefetch
		}
	}
	if p == digits || p+2 > len(buf) || buf[p] != '\r' || buf[p+1] != '\n' {
		return nil, 0
	}
	p += 2
	if len(buf)-p < size+2 || buf[p+size] != '\r' || buf[p+size+1] != '\n' {
		return nil, 0
	}
	return buf[p : p+size], p + size + 2
}
