package bench

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The event loop over TLS keeps its plain shape: a wake-up reads a
// connection once and writes it at most once. The read fills the
// connection's ciphertext buffer (tlsPipe.in), and every whole record in it
// is decrypted by crypto/tls straight into the reply buffer, where the
// replies are parsed as over TCP; requests are encrypted into tlsPipe.out
// and written from there. Both buffers are the connection's own and reused,
// so TLS adds no system call and crypto/tls's only allocation is one small
// reader per record it reads (atLeastReader, inside readFromUntil).

// readableTLS reads once from a ready TLS connection, decrypts every whole
// record into the reply buffer and consumes the replies. readable made
// room in the reply buffer for all of it and one record more.
func (l *clientLoop) readableTLS(c *loopConn) {
	rr, tp := c.t.rr, c.tp
	room := tp.readRoom()
	room = room[:min(len(room), len(rr.buf)-rr.w-tp.pending())]
	n, ok := l.readOnce(c, room)
	if !ok {
		return
	}
	tp.iw += n
	if c.rec != nil {
		l.openRecords(c)
		return
	}
	got := 0
	for tp.hasRecord() {
		m, err := c.tls.Read(rr.buf[rr.w+got:])
		got += m
		if err == errWouldBlock {
			break // a record that only carried a session ticket, or a partial one
		}
		if err == io.EOF {
			err = errServerClosed // the server sent close_notify
		}
		if err != nil {
			l.fail(c, fmt.Errorf("read %s replies over TLS: %w", l.p.op, err))
			return
		}
	}
	if got > 0 {
		l.consume(c, got)
	}
}

// openRecords decrypts every whole record buffered into the reply buffer
// with the connection's own record reader, and consumes the replies.
func (l *clientLoop) openRecords(c *loopConn) {
	rr, tp := c.t.rr, c.tp
	got := 0
	for tp.hasRecord() {
		rl := tlsRecordHeader + int(binary.BigEndian.Uint16(tp.in[tp.ir+3:]))
		if rl > tlsMaxRecord {
			l.fail(c, fmt.Errorf("read %s replies over TLS: a record of %d bytes, longer than TLS allows", l.p.op, rl))
			return
		}
		at := rr.w + got
		content, typ, err := c.rec.open(rr.buf[at:at], tp.in[tp.ir:tp.ir+rl])
		if err != nil {
			l.fail(c, fmt.Errorf("read %s replies: %w", l.p.op, err))
			return
		}
		tp.ir += rl
		tp.recEnd = tp.ir
		switch {
		case typ == recordApplicationData:
			got += len(content)
		case typ == recordHandshake && len(content) > 0 && content[0] == 4:
			// NewSessionTicket: no session is resumed.
		case typ == recordAlert && len(content) == 2 && content[1] == 0:
			l.fail(c, fmt.Errorf("read %s replies: %w (TLS close_notify)", l.p.op, errServerClosed))
			return
		case typ == recordAlert && len(content) == 2:
			l.fail(c, fmt.Errorf("read %s replies: the server sent TLS alert %d", l.p.op, content[1]))
			return
		default:
			l.fail(c, fmt.Errorf("read %s replies: a TLS record of type %d the event loop does not follow (a key update?)", l.p.op, typ))
			return
		}
	}
	if got > 0 {
		l.consume(c, got)
	}
}

// sendTLS encrypts p into the connection's outgoing records and writes
// them.
func (l *clientLoop) sendTLS(c *loopConn, p []byte) {
	if _, err := c.tls.Write(p); err != nil {
		l.fail(c, fmt.Errorf("encrypt %s requests: %w", l.p.op, err))
		return
	}
	c.records++
	c.t.sent += int64(len(p))
	l.flushTLS(c)
}

// flushTLS writes the records not yet written, waiting for EPOLLOUT when
// the socket takes only part of them.
func (l *clientLoop) flushTLS(c *loopConn) {
	tp := c.tp
	n, ok := l.writeSome(c, tp.out[tp.outOff:], "requests")
	if tp.outOff += n; ok {
		tp.flushed()
		l.waitOut(c, false)
	}
}

// writeWindowTLS encrypts the window's queued requests, in records of at
// most a group (windowRecordGroups) and split where the ring wraps, and writes
// them all at once.
func (l *clientLoop) writeWindowTLS(c *loopConn) {
	w, req := &c.win, c.t.batches.req
	for w.queued > 0 {
		k := min(w.queued, w.ring-w.sendAt, w.group)
		p := req[w.sendAt*w.size : (w.sendAt+k)*w.size]
		if _, err := c.tls.Write(p); err != nil {
			l.fail(c, fmt.Errorf("encrypt %s requests: %w", l.p.op, err))
			return
		}
		c.records++
		c.t.sent += int64(len(p))
		w.queued -= k
		if w.sendAt += k; w.sendAt == w.ring {
			w.sendAt = 0
		}
	}
	l.flushTLS(c)
}
