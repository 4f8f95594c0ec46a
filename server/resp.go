package server

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Protocol limits, as Redis sets them by default.
const (
	// maxBulkBytes is the largest bulk string a client may send
	// (Redis's proto-max-bulk-len).
	maxBulkBytes = 512 << 20
	// maxArgs caps the element count of one multibulk request. Redis allows
	// up to INT_MAX; a cap keeps the per-connection argument slice (24 bytes
	// an argument) bounded no matter what the count line claims.
	maxArgs = 1 << 20
	// maxInlineBytes is the longest inline request line, and the longest
	// "*<count>" or "$<length>" line that is waited for.
	maxInlineBytes = 64 << 10
	// Before AUTH succeeds a client may only send small requests, so an
	// unauthenticated peer cannot make the server buffer much.
	unauthMaxArgs      = 10
	unauthMaxBulkBytes = 16 << 10
)

// limits bound what parseCommand accepts.
type limits struct {
	maxArgs, maxBulkBytes int
	unauthenticated       bool // selects the unauthenticated wording of the errors
}

var defaultLimits = limits{maxArgs: maxArgs, maxBulkBytes: maxBulkBytes}
var unauthLimits = limits{maxArgs: unauthMaxArgs, maxBulkBytes: unauthMaxBulkBytes, unauthenticated: true}

// ProtocolError is a request the server cannot parse; the connection is
// answered with "-ERR Protocol error: <Msg>" and closed, as Redis does.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

var (
	errInvalidMultibulk   = &ProtocolError{"invalid multibulk length"}
	errInvalidBulk        = &ProtocolError{"invalid bulk length"}
	errUnauthMultibulk    = &ProtocolError{"unauthenticated multibulk length"}
	errUnauthBulk         = &ProtocolError{"unauthenticated bulk length"}
	errBigCount           = &ProtocolError{"too big mbulk count string"}
	errBigBulkCount       = &ProtocolError{"too big bulk count string"}
	errBigInline          = &ProtocolError{"too big inline request"}
	errUnbalancedQuotes   = &ProtocolError{"unbalanced quotes in request"}
	errBulkNotTerminated  = &ProtocolError{"bulk string not terminated by CRLF"}
	errCountNotTerminated = &ProtocolError{"count line not terminated by CRLF"}
)

// parseCommand parses the first request in b: a RESP array of bulk strings
// or an inline command line. It appends the arguments to args[:0] and
// returns them with the number of bytes consumed.
//
// The arguments are sub-slices of b, never copies: they stay valid only as
// long as the caller leaves those bytes of b alone. Inline arguments with
// quotes are unescaped in place (an unescaped string is never longer than
// its quoted form), so b is modified within the consumed request.
//
// When b holds only part of a request, parseCommand returns n == 0 and no
// error; need is then a lower bound on the total bytes the request takes
// (0 when unknown), so the caller can skip reparsing until that many bytes
// are buffered. A request with no arguments (an empty line, "*0") returns
// n > 0 and no arguments: there is nothing to answer. A malformed request
// returns a *ProtocolError.
func parseCommand(b []byte, args [][]byte, lim limits) (out [][]byte, n, need int, err error) {
	args = args[:0]
	if len(b) == 0 {
		return args, 0, 0, nil
	}
	if b[0] != '*' {
		return parseInline(b, args)
	}
	count, pos, err := parseCountLine(b, 1, errInvalidMultibulk, errBigCount)
	if err != nil || pos == 0 {
		return args, 0, 0, err
	}
	if count <= 0 {
		// Redis treats "*0" and "*-1" requests as empty and skips them.
		return args, pos, 0, nil
	}
	if count > int64(lim.maxArgs) {
		if lim.unauthenticated {
			return args, 0, 0, errUnauthMultibulk
		}
		return args, 0, 0, errInvalidMultibulk
	}
	for i := int64(0); i < count; i++ {
		if pos >= len(b) {
			return args, 0, pos + 1, nil
		}
		if b[pos] != '$' {
			return args, 0, 0, &ProtocolError{fmt.Sprintf("expected '$', got '%s'", printable(b[pos]))}
		}
		size, next, err := parseCountLine(b, pos+1, errInvalidBulk, errBigBulkCount)
		if err != nil {
			return args, 0, 0, err
		}
		if next == 0 {
			return args, 0, 0, nil
		}
		if size < 0 || size > maxBulkBytes {
			return args, 0, 0, errInvalidBulk
		}
		if size > int64(lim.maxBulkBytes) {
			if lim.unauthenticated {
				return args, 0, 0, errUnauthBulk
			}
			return args, 0, 0, errInvalidBulk
		}
		end := next + int(size)
		if end+2 > len(b) {
			return args, 0, end + 2, nil
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return args, 0, 0, errBulkNotTerminated
		}
		args = append(args, b[next:end:end])
		pos = end + 2
	}
	return args, pos, 0, nil
}

// parseCountLine parses the decimal number of a "*<count>\r\n" or
// "$<length>\r\n" line whose digits start at b[start]. It returns the
// position after the line, or 0 when the line is not complete yet.
func parseCountLine(b []byte, start int, invalid, tooBig *ProtocolError) (v int64, next int, err error) {
	// Fast path for what clients send: "0", or up to 18 digits without a
	// leading zero, then CRLF. Anything else takes the careful path below.
	i := start
	for i < len(b) && i-start < 18 && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	if i+1 < len(b) && i > start && b[i] == '\r' && b[i+1] == '\n' && (b[start] != '0' || i == start+1) {
		return v, i + 2, nil
	}
	end := bytes.IndexAny(b[start:], "\r\n")
	switch {
	case end >= 0 && b[start+end] == '\n':
		return 0, 0, errCountNotTerminated
	case end < 0 || start+end+1 == len(b):
		if len(b)-start > maxInlineBytes {
			return 0, 0, tooBig
		}
		return 0, 0, nil // the line is not complete yet
	case b[start+end+1] != '\n':
		return 0, 0, invalid // a CR inside the number
	}
	v, ok := parseInt(b[start : start+end])
	if !ok {
		return 0, 0, invalid
	}
	return v, start + end + 2, nil
}

// parseInline parses an inline command: one line of space-separated words,
// where words may be "double quoted" (with \n \r \t \b \a \\ \" \xHH escapes)
// or 'single quoted' (with \' only), as redis-cli and telnet users type them.
func parseInline(b []byte, args [][]byte) (out [][]byte, n, need int, err error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > maxInlineBytes {
			return args, 0, 0, errBigInline
		}
		return args, 0, 0, nil
	}
	if nl > maxInlineBytes {
		return args, 0, 0, errBigInline
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		if len(args) == maxArgs {
			return args, 0, 0, errInvalidMultibulk
		}
		var word []byte
		word, i, err = inlineWord(line, i)
		if err != nil {
			return args, 0, 0, err
		}
		args = append(args, word)
	}
	return args, nl + 1, 0, nil
}

// inlineWord reads the word starting at line[i], unescaping it in place,
// and returns it with the index after it.
func inlineWord(line []byte, i int) (word []byte, next int, err error) {
	start, w := i, i
	inDouble, inSingle := false, false
	for {
		if i == len(line) {
			if inDouble || inSingle {
				return nil, 0, errUnbalancedQuotes
			}
			return line[start:w:w], i, nil
		}
		c := line[i]
		switch {
		case inDouble:
			switch {
			case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				line[w] = unhex(line[i+2])<<4 | unhex(line[i+3])
				w++
				i += 4
				continue
			case c == '\\' && i+1 < len(line):
				i++
				switch line[i] {
				case 'n':
					line[w] = '\n'
				case 'r':
					line[w] = '\r'
				case 't':
					line[w] = '\t'
				case 'b':
					line[w] = '\b'
				case 'a':
					line[w] = '\a'
				default:
					line[w] = line[i]
				}
			case c == '"':
				// A closing quote must end the word.
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return nil, 0, errUnbalancedQuotes
				}
				return line[start:w:w], i + 1, nil
			default:
				line[w] = c
			}
		case inSingle:
			switch {
			case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				line[w] = '\''
			case c == '\'':
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return nil, 0, errUnbalancedQuotes
				}
				return line[start:w:w], i + 1, nil
			default:
				line[w] = c
			}
		default:
			switch c {
			case ' ', '\t', '\r', '\v', '\f', '\n':
				return line[start:w:w], i, nil
			case '"':
				inDouble = true
				i++
				continue
			case '\'':
				inSingle = true
				i++
				continue
			default:
				line[w] = c
			}
		}
		w++
		i++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// printable renders one byte for an error message that goes on one RESP
// line: control bytes become \xHH.
func printable(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("\\x%02x", c)
	}
	return string(c)
}

// parseInt parses a decimal int64 the way Redis's string2ll does: an
// optional '-', digits, no leading zeros (except "0"), no '+', no spaces,
// no overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] == '0' {
		return 0, len(b) == 1
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (1<<64-1-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u-1) - 1, true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// Reply writers: each appends one RESP2 reply to dst and returns it.

func appendSimple(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// appendError appends an error reply; msg starts with the error code
// ("ERR", "NOAUTH", ...). CR and LF inside msg would end the reply early,
// so they become spaces, as Redis does.
func appendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, '\r', '\n')
}

func appendInt(dst []byte, v int64) []byte {
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '\r', '\n')
}

func appendBulk(dst []byte, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

func appendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func appendNull(dst []byte) []byte { return append(dst, "$-1\r\n"...) }

func appendArray(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

func appendOK(dst []byte) []byte { return append(dst, "+OK\r\n"...) }

// errNotInteger is what Redis answers when an argument or a stored value
// should be a 64-bit integer and is not.
var errNotInteger = errors.New("ERR value is not an integer or out of range")
