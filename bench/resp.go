package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tierbench/tierbench/internal/keyspace"
)

// opcode is a command the generator can send.
type opcode uint8

const (
	opGet opcode = iota
	opSet
	opMSet
	opMGet
	opIncr
	opDel
	opPing
)

var opNames = [...]string{opGet: "GET", opSet: "SET", opMSet: "MSET", opMGet: "MGET", opIncr: "INCR", opDel: "DEL", opPing: "PING"}

func (o opcode) String() string { return opNames[o] }

// parseOp maps a command name (any case) to its opcode.
func parseOp(name string) (opcode, bool) {
	for i, n := range opNames {
		if equalFoldASCII(name, n) {
			return opcode(i), true
		}
	}
	return 0, false
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// multiKey reports whether one command of o carries a whole batch of keys
// (MGET, MSET) rather than one key per command.
func (o opcode) multiKey() bool { return o == opMGet || o == opMSet }

// appendUint appends v in decimal.
func appendUint(dst []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

// mix64 is the splitmix64 finaliser: a cheap bijective scramble of v.
func mix64(v uint64) uint64 {
	v += 0x9e3779b97f4a7c15
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9
	v = (v ^ (v >> 27)) * 0x94d049bb133111eb
	return v ^ (v >> 31)
}

// fillValue writes into dst the value stored under key index k: decimal
// digits drawn from a hash of k, the first one non-zero, so that every key's
// value differs and a value of up to 18 bytes is also a valid INCR operand.
// --verify recomputes it to check a GET reply without remembering anything.
func fillValue(dst []byte, k uint64) {
	x := mix64(k)
	for i := range dst {
		if i%16 == 0 {
			x = mix64(x + uint64(i))
		}
		if i == 0 {
			dst[i] = byte('1' + x%9)
		} else {
			dst[i] = byte('0' + x%10)
		}
		x /= 10
	}
}

// appendBulkHeader appends "$<n>\r\n".
func appendBulkHeader(dst []byte, n int) []byte {
	dst = append(dst, '$')
	dst = appendUint(dst, uint64(n))
	return append(dst, '\r', '\n')
}

func appendArrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = appendUint(dst, uint64(n))
	return append(dst, '\r', '\n')
}

func appendBulkString(dst []byte, s string) []byte {
	dst = appendBulkHeader(dst, len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func appendBulkKey(dst []byte, k uint64, keyLength int) []byte {
	dst = appendBulkHeader(dst, keyLength)
	dst = keyspace.AppendKey(dst, k, keyLength)
	return append(dst, '\r', '\n')
}

func appendBulkValue(dst []byte, k uint64, valueLength int) []byte {
	dst = appendBulkHeader(dst, valueLength)
	n := len(dst)
	for range valueLength {
		dst = append(dst, 0)
	}
	fillValue(dst[n:], k)
	return append(dst, '\r', '\n')
}

// appendCommand appends one command of op in RESP array form. Single-key
// commands use keys[0]; MGET and MSET carry every key of keys; PING ignores
// them. Once dst has grown to its working size it appends without allocating.
func appendCommand(dst []byte, op opcode, keys []uint64, keyLength, valueLength int) []byte {
	switch op {
	case opGet, opIncr, opDel:
		dst = appendArrayHeader(dst, 2)
		dst = appendBulkString(dst, op.String())
		return appendBulkKey(dst, keys[0], keyLength)
	case opSet:
		dst = appendArrayHeader(dst, 3)
		dst = appendBulkString(dst, "SET")
		dst = appendBulkKey(dst, keys[0], keyLength)
		return appendBulkValue(dst, keys[0], valueLength)
	case opMGet:
		dst = appendArrayHeader(dst, 1+len(keys))
		dst = appendBulkString(dst, "MGET")
		for _, k := range keys {
			dst = appendBulkKey(dst, k, keyLength)
		}
		return dst
	case opMSet:
		dst = appendArrayHeader(dst, 1+2*len(keys))
		dst = appendBulkString(dst, "MSET")
		for _, k := range keys {
			dst = appendBulkKey(dst, k, keyLength)
			dst = appendBulkValue(dst, k, valueLength)
		}
		return dst
	default: // opPing
		dst = appendArrayHeader(dst, 1)
		return appendBulkString(dst, "PING")
	}
}

// errServerClosed is wrapped when the server closes the connection while
// replies are still owed.
var errServerClosed = errors.New("bench: server closed the connection")

// errProtocol is wrapped when a reply is not valid RESP.
var errProtocol = errors.New("bench: protocol error")

// replyCounts tallies classified replies. A key is counted once: MSET's +OK
// acknowledges every key it carried, MGET's array elements count one each.
type replyCounts struct {
	hits       int64 // bulk, simple string, integer (DEL: non-zero) replies
	misses     int64 // null bulk / null array / RESP3 null; DEL answering :0
	errors     int64 // -ERR and other error replies
	mismatches int64 // --verify: a bulk that differs from the loaded value
}

// maxErrorText bounds the first server error kept for the report.
const maxErrorText = 200

// replyReader parses RESP replies from a connection just enough to count and
// classify them. It owns buf: bytes in buf[r:w] are read but not yet parsed.
// After the first few calls it allocates nothing per reply: the buffer is
// fixed and the only allocation is the copy of the first error text.
type replyReader struct {
	src      io.Reader
	buf      []byte
	r, w     int
	received int64 // bytes read from src
	counts   replyCounts

	op     opcode
	verify bool   // compare GET/MGET bulks with fillValue of their key
	expect []byte // scratch of valueLength bytes for verify

	firstError string // text of the first error reply, without the '-'

	// redirect, when set, sees each top-level error reply (text without
	// the '-') first; returning true takes it out of the counts
	// (--cluster-bench's -MOVED and -ASK).
	redirect func(text []byte, keys []uint64) bool

	// pushed means an event loop fills buf (clientLoop): src is not read,
	// and a reply not yet wholly in buf[r:w] ends parsing with errNeedMore,
	// leaving r and the counts for the caller to roll back (tryReply).
	pushed bool
	// short is, after errNeedMore from a bulk, how many more bytes past w
	// that bulk needs: the loop does not parse again before they arrived.
	short int
}

func newReplyReader(src io.Reader, bufBytes int, op opcode, verify bool, valueLength int) *replyReader {
	return &replyReader{src: src, buf: make([]byte, bufBytes), op: op, verify: verify, expect: make([]byte, valueLength)}
}

// errNeedMore ends parsing in pushed mode where a blocking reader would
// wait: the reply is not complete in the buffer yet.
var errNeedMore = errors.New("bench: reply incomplete in buffer")

// fill reads more bytes from src, first moving unparsed bytes to the front.
func (rr *replyReader) fill() error {
	if rr.pushed {
		return errNeedMore
	}
	if rr.r > 0 {
		rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
		rr.r = 0
	}
	if rr.w == len(rr.buf) {
		return fmt.Errorf("%w: a reply line is longer than %d bytes", errProtocol, len(rr.buf))
	}
	n, err := rr.src.Read(rr.buf[rr.w:])
	rr.w += n
	rr.received += int64(n)
	if n > 0 {
		return nil
	}
	if err == io.EOF {
		return errServerClosed
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the bounds of the next CRLF-terminated line (without the CRLF)
// in buf and consumes it.
func (rr *replyReader) line() (start, end int, err error) {
	for {
		if i := bytes.IndexByte(rr.buf[rr.r:rr.w], '\n'); i >= 0 {
			start, end = rr.r, rr.r+i
			if end == start || rr.buf[end-1] != '\r' {
				return 0, 0, fmt.Errorf("%w: line %q does not end with CRLF", errProtocol, rr.buf[start:end])
			}
			rr.r = end + 1
			return start, end - 1, nil
		}
		if err := rr.fill(); err != nil {
			return 0, 0, err
		}
	}
}

// parseInt parses the decimal integer in buf[start:end].
func (rr *replyReader) parseInt(start, end int) (int64, error) {
	b := rr.buf[start:end]
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("%w: bad integer %q", errProtocol, rr.buf[start:end])
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: bad integer %q", errProtocol, rr.buf[start:end])
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// bulk consumes a bulk body of n bytes and its CRLF; with verify it compares
// the body with the value of key.
func (rr *replyReader) bulk(n int64, key uint64, check bool) error {
	if rr.pushed && int64(rr.w-rr.r) < n+2 {
		rr.short = int(n + 2 - int64(rr.w-rr.r))
		return errNeedMore
	}
	check = check && rr.verify
	match := true
	if check {
		if n != int64(len(rr.expect)) {
			match = false
		} else {
			fillValue(rr.expect, key)
		}
	}
	var off int64
	total := n + 2
	for off < total {
		if rr.r == rr.w {
			if err := rr.fill(); err != nil { // fill moves r and w back to 0
				return err
			}
		}
		chunk := min(int64(rr.w-rr.r), total-off)
		seg := rr.buf[rr.r : rr.r+int(chunk)]
		if check && match && off < n {
			body := min(chunk, n-off)
			if !bytes.Equal(seg[:body], rr.expect[off:off+body]) {
				match = false
			}
		}
		for j := max(off, n); j < off+chunk; j++ {
			want := byte('\n')
			if j == n {
				want = '\r'
			}
			if seg[j-off] != want {
				return fmt.Errorf("%w: bulk of %d bytes not followed by CRLF", errProtocol, n)
			}
		}
		rr.r += int(chunk)
		off += chunk
	}
	if check && !match {
		rr.counts.mismatches++
	}
	return nil
}

// noteError counts an error reply of weight keys and keeps the first text.
func (rr *replyReader) noteError(start, end int, weight int64) {
	rr.counts.errors += weight
	if rr.firstError == "" {
		t := rr.buf[start+1 : end]
		if len(t) > maxErrorText {
			t = t[:maxErrorText]
		}
		rr.firstError = string(t)
	}
}

// reply consumes one top-level reply to a command that carried keys (a
// single key for GET, SET, INCR, DEL, PING; the batch's keys for MGET, MSET).
func (rr *replyReader) reply(keys []uint64) error {
	start, end, err := rr.line()
	if err != nil {
		return err
	}
	weight := int64(max(len(keys), 1))
	if end == start {
		return fmt.Errorf("%w: empty reply line", errProtocol)
	}
	switch rr.buf[start] {
	case '+':
		rr.counts.hits += weight
	case '-':
		if rr.redirect != nil && rr.redirect(rr.buf[start+1:end], keys) {
			return nil
		}
		rr.noteError(start, end, weight)
	case ':':
		v, err := rr.parseInt(start+1, end)
		if err != nil {
			return err
		}
		if rr.op == opDel && v == 0 {
			rr.counts.misses++
		} else {
			rr.counts.hits++
		}
	case '_':
		rr.counts.misses += weight
	case '$':
		n, err := rr.parseInt(start+1, end)
		if err != nil {
			return err
		}
		if n < 0 {
			rr.counts.misses++
			return nil
		}
		rr.counts.hits++
		return rr.bulk(n, keys[0], rr.op == opGet)
	case '*':
		n, err := rr.parseInt(start+1, end)
		if err != nil {
			return err
		}
		if n < 0 {
			rr.counts.misses += weight
			return nil
		}
		for i := int64(0); i < n; i++ {
			var key uint64
			check := rr.op == opMGet && i < int64(len(keys))
			if check {
				key = keys[i]
			}
			if err := rr.element(key, check); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: unexpected reply %q", errProtocol, rr.buf[start:end])
	}
	return nil
}

// element consumes one element of an array reply (MGET); nested arrays are
// not expected from any command the generator sends.
func (rr *replyReader) element(key uint64, check bool) error {
	start, end, err := rr.line()
	if err != nil {
		return err
	}
	if end == start {
		return fmt.Errorf("%w: empty reply line", errProtocol)
	}
	switch rr.buf[start] {
	case '$':
		n, err := rr.parseInt(start+1, end)
		if err != nil {
			return err
		}
		if n < 0 {
			rr.counts.misses++
			return nil
		}
		rr.counts.hits++
		return rr.bulk(n, key, check)
	case '_':
		rr.counts.misses++
	case '+', ':':
		rr.counts.hits++
	case '-':
		rr.noteError(start, end, 1)
	default:
		return fmt.Errorf("%w: unexpected array element %q", errProtocol, rr.buf[start:end])
	}
	return nil
}

// replies consumes n top-level replies; reply i belongs to
// keys[i*keysPerReply:(i+1)*keysPerReply].
func (rr *replyReader) replies(n, keysPerReply int, keys []uint64) error {
	for i := range n {
		if err := rr.reply(keys[i*keysPerReply : (i+1)*keysPerReply]); err != nil {
			return err
		}
	}
	return nil
}

// makeRoom readies a pushed reader's buffer for the next read: room past
// w for the partial reply at r and at least one byte more (all that its
// bulk still needs), and extra bytes beyond, compacting or, for a reply
// longer than the buffer, growing it once per size.
func (rr *replyReader) makeRoom(extra int) {
	if rr.r == rr.w {
		rr.r, rr.w = 0, 0
	}
	need := rr.w - rr.r + max(rr.short, 1) + extra
	if rr.r > 0 && (len(rr.buf)-rr.w < len(rr.buf)/4 || need > len(rr.buf)-rr.r) {
		rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
		rr.r = 0
	}
	if need > len(rr.buf) {
		nb := make([]byte, max(2*len(rr.buf), need))
		rr.w = copy(nb, rr.buf[:rr.w])
		rr.buf = nb
	}
}

// pushedBytes counts n bytes read into a pushed reader's buffer at w; false
// means a bulk being read is still incomplete, so parsing would not
// progress.
func (rr *replyReader) pushedBytes(n int) bool {
	rr.w += n
	rr.received += int64(n)
	if rr.short > 0 {
		if rr.short -= n; rr.short > 0 {
			return false
		}
		rr.short = 0
	}
	return true
}

// tryReply consumes one reply if it is wholly in the buffer; if not, it
// leaves the buffer and counts as they were and returns false.
func (rr *replyReader) tryReply(keys []uint64) (bool, error) {
	mark, counts := rr.r, rr.counts
	err := rr.reply(keys)
	if err == errNeedMore {
		rr.r, rr.counts = mark, counts
		return false, nil
	}
	return err == nil, err
}
