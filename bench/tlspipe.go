package bench

import (
	"encoding/binary"
	"net"
	"time"
)

// tlsPipe is the net.Conn under a connection's tls.Conn. Until detach it
// passes records straight to the socket's raw calls (the handshake, the
// load, --online, --cluster-bench). In an offline event loop (loopMode) it
// owns two buffers instead: in holds the ciphertext the loop read with its
// one read(2) per wake-up, and out gathers the records tls.Conn wrote, which
// the loop writes with one write(2). tls.Conn never blocks on it: when no
// whole record is buffered, Read returns errWouldBlock, a temporary
// net.Error, which tls.Conn hands back without marking the connection
// broken, so the next wake-up carries on.
//
// Read hands out the bytes of one whole record at a time and never starts
// a record before all of it is in: so when tls.Conn returns, it holds no
// ciphertext of its own, and "a whole record is buffered" (hasRecord) is
// exactly "tls.Conn.Read has something to return".
type tlsPipe struct {
	s    *socket
	loop bool

	in     []byte
	ir, iw int // in[ir:iw] is ciphertext not yet handed to tls.Conn
	recEnd int // end of the record being handed out; ir when at a boundary
	out    []byte
	outOff int // out[outOff:] is not yet written
}

// tlsRecordHeader is a TLS record's header: type, version, length.
const tlsRecordHeader = 5

// tlsMaxRecord is the longest record a peer may send (TLS 1.2's limit,
// above 1.3's 2^14+256 of ciphertext), header included.
const tlsMaxRecord = tlsRecordHeader + 1<<14 + 2048

// tlsInBytes is an event-loop connection's ciphertext buffer.
const tlsInBytes = 4 * tlsMaxRecord

// wouldBlock is the error of a pipe with no whole record buffered.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "bench: no whole TLS record buffered" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

var errWouldBlock net.Error = wouldBlock{}

// loopMode switches the pipe to the event loop's buffers.
func (tp *tlsPipe) loopMode(outBytes int) {
	tp.loop = true
	tp.in = make([]byte, tlsInBytes)
	tp.out = make([]byte, 0, outBytes)
}

// hasRecord reports whether Read has bytes to hand out: the rest of a
// record begun, or a whole record (one too long to ever fit is handed out
// too, for tls.Conn to refuse).
func (tp *tlsPipe) hasRecord() bool {
	if tp.ir < tp.recEnd {
		return true
	}
	n := tp.iw - tp.ir
	if n < tlsRecordHeader {
		return false
	}
	rl := tlsRecordHeader + int(binary.BigEndian.Uint16(tp.in[tp.ir+3:]))
	return n >= rl || rl > tlsMaxRecord
}

// pending is the ciphertext buffered and not yet handed out.
func (tp *tlsPipe) pending() int { return tp.iw - tp.ir }

// readRoom makes room at the end of in for a read of up to a record and
// returns it.
func (tp *tlsPipe) readRoom() []byte {
	if tp.ir == tp.iw {
		tp.ir, tp.iw, tp.recEnd = 0, 0, 0
	} else if len(tp.in)-tp.iw < tlsMaxRecord {
		tp.recEnd -= tp.ir
		tp.iw = copy(tp.in, tp.in[tp.ir:tp.iw])
		tp.ir = 0
	}
	return tp.in[tp.iw:]
}

// Read gives tls.Conn the next bytes of the current record, or starts the
// next record if it is wholly buffered.
func (tp *tlsPipe) Read(p []byte) (int, error) {
	if !tp.loop {
		return tp.s.readRaw(p)
	}
	if tp.ir == tp.recEnd {
		if !tp.hasRecord() {
			return 0, errWouldBlock
		}
		rl := tlsRecordHeader + int(binary.BigEndian.Uint16(tp.in[tp.ir+3:]))
		tp.recEnd = min(tp.ir+rl, tp.iw)
	}
	n := copy(p, tp.in[tp.ir:tp.recEnd])
	tp.ir += n
	return n, nil
}

// Write takes the records tls.Conn wrote: to the socket, or to out.
func (tp *tlsPipe) Write(p []byte) (int, error) {
	if !tp.loop {
		return tp.s.writeRaw(p)
	}
	tp.out = append(tp.out, p...)
	return len(p), nil
}

// flushed forgets the written records once all of out is written.
func (tp *tlsPipe) flushed() {
	tp.out, tp.outOff = tp.out[:0], 0
}

func (tp *tlsPipe) Close() error                       { return tp.s.conn.Close() }
func (tp *tlsPipe) LocalAddr() net.Addr                { return tp.s.conn.LocalAddr() }
func (tp *tlsPipe) RemoteAddr() net.Addr               { return tp.s.conn.RemoteAddr() }
func (tp *tlsPipe) SetDeadline(t time.Time) error      { return tp.s.conn.SetDeadline(t) }
func (tp *tlsPipe) SetReadDeadline(t time.Time) error  { return tp.s.conn.SetReadDeadline(t) }
func (tp *tlsPipe) SetWriteDeadline(t time.Time) error { return tp.s.conn.SetWriteDeadline(t) }
