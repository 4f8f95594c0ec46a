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

// A cell's only connection splits its window into groups, so that the
// server works on one group while the client reads and refills another:
// one connection's window sent as one write comes back as one write of
// replies (the server answers all it read at once), and the client and
// the server then take turns, each idle while the other works. With two
// connections or more the server already has another connection's
// requests to work on while one connection's replies are with the client,
// and a split would only cost system calls.
//
// windowReadGroups: over TCP the server reads whatever has arrived, so
// the groups are kept apart by the client's reads, each taking at most
// Batch/windowReadGroups replies' worth of bytes and writing the refill
// they free before the next read. The server, never idle, then settles
// on two groups whatever the client's split; the client's reads must be
// finer than halves, because two halves written back to back reach a
// server still waking up and are read as one.
//
// windowRecordGroups: over TLS the server decrypts and serves one record
// per read, so the groups are the records the requests are encrypted in
// (all written with one write(2)); two is enough to keep it busy, and
// each record more costs it a round of its event loop.
const (
	windowReadGroups   = 4
	windowRecordGroups = 2
)

// windowState is one connection's sliding window. The pre-built batches
// are used as one ring of equal-sized single-key requests; request r asks
// for keys[r]. Invariants: inFlight <= Batch; the queued requests
// (decided, not yet wholly written) start at ring index sendAt, of which
// sendOff bytes are already written; replies arrive for requests from
// readAt on; group <= Batch, and group < Batch only for a cell's only
// connection (windowReadGroups, windowRecordGroups).
type windowState struct {
	ring, size, refill int // requests in the ring, bytes per request, freed requests worth a write
	group              int // requests per group: the most replies a TCP read takes, requests a TLS record carries
	sendAt, sendOff    int
	queued             int // requests decided but not yet wholly written
	readAt             int
	inFlight           int // requests queued or written and not yet answered
	owed               int // requests freed by replies and not yet queued
}

// startWindow queues a whole window and writes it.
func (l *clientLoop) startWindow(c *loopConn) {
	tb, b := c.t.batches, l.p.Batch
	group := b
	if l.single {
		groups := windowReadGroups
		if c.tp != nil {
			groups = windowRecordGroups
		}
		group = (b + groups - 1) / groups
	}
	c.win = windowState{ring: len(tb.keys), size: tb.offsets[1] / b, refill: max(1, b/windowRefill), group: group, queued: b, inFlight: b}
	l.writeWindow(c)
}

// windowReadCap is the most bytes one read of c's replies over TCP may
// take: about a group's worth, from the mean reply length the connection
// has seen, or 0 (no bound) when the window is not split or no reply has
// been seen yet.
func windowReadCap(c *loopConn, batch int) int {
	if c.win.group >= batch || c.repliesSeen == 0 {
		return 0
	}
	return max(1, int(c.replyBytes/c.repliesSeen)) * c.win.group
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
		c.repliesSeen++
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
		c.writes++
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
