package bench

import (
	"encoding/binary"
	"net"
	"time"
)

// tlsPipe is the net.Conn under a connection's tls.Conn. It reads the
// socket into its own buffer, in, and hands tls.Conn the bytes of one whole
// record at a time, never starting a record before all of it is in: so
// tls.Conn never holds ciphertext of its own between calls, and records
// counts exactly the records it has read (an offline loop takes over the
// reading at the next one, see tlsRecordReader). Until an offline event
// loop takes the connection (the handshake, the load, --online,
// --cluster-bench) Read fills in with the socket's raw reads and Write
// writes through; in an event loop (loopMode) the loop fills in with its
// one read(2) per wake-up, Read returns errWouldBlock when no whole record
// is buffered, a temporary net.Error which tls.Conn hands back without
// marking the connection broken, and Write gathers records in out, which
// the loop writes with one write(2).
type tlsPipe struct {
	s    *socket
	loop bool

	in      []byte
	ir, iw  int    // in[ir:iw] is ciphertext not yet handed to tls.Conn
	recEnd  int    // end of the record being handed out; ir when at a boundary
	records uint64 // records begun: read by tls.Conn
	out     []byte
	outOff  int // out[outOff:] is not yet written

	// appStart is records when the handshake ended: the server's
	// application records read since are records-appStart.
	appStart uint64
	keys     keyLog // the server's traffic secret, for tlsRecordReader
}

// tlsRecordHeader is a TLS record's header: type, version, length.
const tlsRecordHeader = 5

// tlsMaxRecord is the longest record a peer may send (TLS 1.2's limit,
// above 1.3's 2^14+256 of ciphertext), header included.
const tlsMaxRecord = tlsRecordHeader + 1<<14 + 2048

// tlsInBytes is a connection's ciphertext buffer: a whole record and
// the partial one before it always fit.
const tlsInBytes = 2 * tlsMaxRecord

// wouldBlock is the error of a pipe with no whole record buffered.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "bench: no whole TLS record buffered" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

var errWouldBlock net.Error = wouldBlock{}

// loopMode hands the pipe to an event loop.
func (tp *tlsPipe) loopMode(outBytes int) {
	tp.loop = true
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
// next record once it is wholly buffered, reading the socket for it
// before an event loop has the connection.
func (tp *tlsPipe) Read(p []byte) (int, error) {
	if tp.ir == tp.recEnd {
		for !tp.hasRecord() {
			if tp.loop {
				return 0, errWouldBlock
			}
			n, err := tp.s.readRaw(tp.readRoom())
			tp.iw += n
			if err != nil {
				return 0, err
			}
		}
		rl := tlsRecordHeader + int(binary.BigEndian.Uint16(tp.in[tp.ir+3:]))
		tp.recEnd = min(tp.ir+rl, tp.iw)
		tp.records++
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
