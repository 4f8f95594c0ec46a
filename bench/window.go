package bench

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Offline pipeline modes (Config.Pipeline).
const (
	// PipelineBatch sends Batch requests, then reads all their replies.
	PipelineBatch = "batch"
	// PipelineWindow keeps Batch requests in flight on each connection.
	PipelineWindow = "window"
)

// windowRefill is the share of the window that replies must free before
// the next write when more replies are still on their way: a write per
// eighth of the window keeps at least seven eighths of it at the server
// while costing a write per Batch/8 replies, not one per read (replies
// trickling in a few at a time would otherwise cost a write each, which
// is where a naive sliding window spends more client CPU than batches).
const windowRefill = 8

// windowState is one connection's sliding window. The pre-built batches
// are used as one ring of equal-sized single-key requests; request r asks
// for keys[r]. Invariants: inFlight <= Batch; the queued requests
// (decided, not yet wholly written) start at ring index sendAt, of which
// sendOff bytes are already written; replies arrive for requests from
// readAt on.
type windowState struct {
	ring, size, refill int // requests in the ring, bytes per request, freed requests worth a write
	sendAt, sendOff    int
	queued             int // requests decided but not yet wholly written
	readAt             int
	inFlight           int // requests queued or written and not yet answered
	owed               int // requests freed by replies and not yet queued
}

// startWindow queues a whole window and writes it.
func (l *clientLoop) startWindow(c *loopConn) {
	tb, b := c.t.batches, l.p.Batch
	c.win = windowState{ring: len(tb.keys), size: tb.offsets[1] / b, refill: max(1, b/windowRefill), queued: b, inFlight: b}
	l.writeWindow(c)
}

// windowReplies consumes the replies that arrived, then sends the
// requests they freed once that is worth a write (windowRefill) or
// nothing is left in flight; after stop it sends nothing more and the
// connection finishes when the last reply has come.
func (l *clientLoop) windowReplies(c *loopConn) {
	w, rr, keys := &c.win, c.t.rr, c.t.batches.keys
	for w.inFlight > 0 {
		ok, err := rr.tryReply(keys[w.readAt : w.readAt+1])
		if err != nil {
			l.fail(c, fmt.Errorf("read %s replies: %w", l.p.op, err))
			return
		}
		if !ok {
			break
		}
		if l.p.redraw {
			c.t.batches.redrawRequest(l.p, w.readAt)
		}
		if w.readAt++; w.readAt == w.ring {
			w.readAt = 0
		}
		w.inFlight--
		w.owed++
	}
	stopping := l.stop.Load()
	if w.inFlight == 0 && (w.owed == 0 || stopping) {
		l.finish(c)
		return
	}
	if !stopping && w.owed > 0 && (w.owed >= w.refill || w.inFlight == 0) {
		w.queued += w.owed
		w.inFlight += w.owed
		w.owed = 0
		l.writeWindow(c)
	}
}

// writeWindow writes the queued requests, as one write unless the ring
// wraps, waiting for EPOLLOUT when the socket takes only part of them.
func (l *clientLoop) writeWindow(c *loopConn) {
	w, req := &c.win, c.t.batches.req
	if c.tp != nil {
		l.writeWindowTLS(c)
		return
	}
	for w.queued > 0 {
		k := min(w.queued, w.ring-w.sendAt)
		p := req[w.sendAt*w.size+w.sendOff : (w.sendAt+k)*w.size]
		n, e := rawWrite(c.fd, p)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			l.waitOut(c, true)
			return
		default:
			l.fail(c, fmt.Errorf("send %s requests: %w", l.p.op, closedErr(e)))
			return
		}
		c.t.sent += int64(n)
		done := w.sendOff + n
		w.sendOff = done % w.size
		w.queued -= done / w.size
		if w.sendAt += done / w.size; w.sendAt >= w.ring {
			w.sendAt -= w.ring
		}
		if n < len(p) {
			l.waitOut(c, true) // the socket is full
			return
		}
	}
	l.waitOut(c, false)
}
