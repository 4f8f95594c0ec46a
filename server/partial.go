package server

import (
	"fmt"
	"slices"
)

// partialRequest is a multibulk request received in part. Parsing resumes
// where it stopped when more bytes arrive: the argument count, the
// arguments already parsed and the length of the bulk being received are
// kept, so a request sent in many small pieces is parsed once, not once
// per piece (Redis keeps the same state in its client struct).
//
// Arguments are kept as offsets from the request's start, which stay valid
// when the connection moves the unanswered bytes to the front of its read
// buffer or into a bigger one.
type partialRequest struct {
	count  int // arguments the request announced; 0: none in progress
	pos    int // offset in the request where parsing resumes
	bulk   int // length of the bulk whose header is read; -1: none
	bulkAt int // offset of that bulk's first byte
	// spans are the arguments parsed so far: start and end offsets (a
	// request fits in MaxQueryBytes, below 4 GiB).
	spans [][2]uint32
}

// next parses the first request in b as parseCommand does, resuming a
// request left partial by an earlier call. b must start where the earlier
// call's b started (the same request), holding at least as many bytes.
func (p *partialRequest) next(b []byte, args [][]byte, lim limits) (out [][]byte, n, need int, err error) {
	if p.count == 0 {
		args, n, need, err = parseCommand(b, args, lim)
		if err != nil || n > 0 || len(b) == 0 || b[0] != '*' {
			return args, n, need, err
		}
		// Incomplete: parse it again, once, keeping the state this time.
		p.bulk = -1
	}
	return p.resume(b, args, lim)
}

// resume continues the multibulk request at the start of b.
func (p *partialRequest) resume(b []byte, args [][]byte, lim limits) (out [][]byte, n, need int, err error) {
	args = args[:0]
	defer func() {
		if err != nil || n > 0 {
			p.reset()
		}
	}()
	pos := p.pos
	if p.count == 0 {
		count, next, err := parseCountLine(b, 1, errInvalidMultibulk, errBigCount)
		switch {
		case err != nil:
			return args, 0, 0, err
		case next == 0:
			return args, 0, 0, nil
		case count <= 0:
			return args, next, 0, nil
		case count > int64(lim.maxArgs):
			if lim.unauthenticated {
				return args, 0, 0, errUnauthMultibulk
			}
			return args, 0, 0, errInvalidMultibulk
		}
		p.count, pos = int(count), next
	}
	for len(p.spans) < p.count {
		if p.bulk < 0 {
			if pos >= len(b) {
				p.pos = pos
				return args, 0, pos + 1, nil
			}
			if b[pos] != '$' {
				return args, 0, 0, &ProtocolError{fmt.Sprintf("expected '$', got '%s'", printable(b[pos]))}
			}
			size, next, err := parseCountLine(b, pos+1, errInvalidBulk, errBigBulkCount)
			switch {
			case err != nil:
				return args, 0, 0, err
			case next == 0:
				p.pos = pos
				return args, 0, 0, nil
			case size < 0 || size > maxBulkBytes:
				return args, 0, 0, errInvalidBulk
			case size > int64(lim.maxBulkBytes):
				if lim.unauthenticated {
					return args, 0, 0, errUnauthBulk
				}
				return args, 0, 0, errInvalidBulk
			}
			p.bulk, p.bulkAt = int(size), next
		}
		end := p.bulkAt + p.bulk
		if end+2 > len(b) {
			p.pos = pos
			return args, 0, end + 2, nil
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return args, 0, 0, errBulkNotTerminated
		}
		p.spans = append(p.spans, [2]uint32{uint32(p.bulkAt), uint32(end)})
		pos, p.bulk = end+2, -1
	}
	args = slices.Grow(args, len(p.spans))
	for _, s := range p.spans {
		args = append(args, b[s[0]:s[1]:s[1]])
	}
	return args, pos, 0, nil
}

// reset forgets the request in progress, keeping the span slice unless it
// grew big for one huge request.
func (p *partialRequest) reset() {
	spans := p.spans[:0]
	if cap(spans) > 4096 {
		spans = nil
	}
	*p = partialRequest{spans: spans, bulk: -1}
}
