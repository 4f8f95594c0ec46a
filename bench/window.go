package bench

import (
	"fmt"
	"sync/atomic"
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

// window is one connection's sliding-window state, kept on its
// offlineThread so that a run allocates nothing once the first has built
// it (the reader's starving hook is a method value made once).
type window struct {
	t    *offlineThread
	p    *plan
	stop *atomic.Bool

	ring, size, refill             int // requests in the ring, bytes per request, sends per write at least
	sendAt, readAt, inFlight, owed int
	starving                       func() error
}

// runWindow keeps Batch requests in flight until stop is set, then reads
// the replies still owed. The pre-built batches are used as one ring of
// equal-sized single-key requests; request r asks for tb.keys[r]. Requests
// freed by replies are sent when the reader has used up what arrived and
// would wait for more (replyReader.starving), once windowRefill of the
// window is free, or at once when nothing is left in flight. It allocates
// nothing per request.
func (t *offlineThread) runWindow(p *plan, stop *atomic.Bool) {
	w := t.win
	if w == nil {
		w = &window{t: t}
		w.starving = w.starve
		t.win = w
	}
	tb := t.batches
	*w = window{t: t, p: p, stop: stop, ring: len(tb.keys), size: tb.offsets[1] / p.Batch,
		refill: max(1, p.Batch/windowRefill), starving: w.starving}
	t.rr.starving = w.starving
	defer func() { t.rr.starving = nil }()
	if t.err = w.send(p.Batch); t.err != nil {
		return
	}
	for {
		if w.inFlight == 0 {
			if w.owed == 0 || stop.Load() {
				return
			}
			if t.err = w.flush(); t.err != nil {
				return
			}
			continue
		}
		if err := t.rr.reply(tb.keys[w.readAt : w.readAt+1]); err != nil {
			t.err = fmt.Errorf("read %s replies: %w", p.op, closedErr(err))
			return
		}
		w.readAt++
		if w.readAt == w.ring {
			w.readAt = 0
		}
		w.inFlight--
		w.owed++
	}
}

// send writes the next n requests of the ring.
func (w *window) send(n int) error {
	tb := w.t.batches
	for n > 0 {
		k := min(n, w.ring-w.sendAt)
		req := tb.req[w.sendAt*w.size : (w.sendAt+k)*w.size]
		if _, err := w.t.conn.Write(req); err != nil {
			return fmt.Errorf("send %s requests: %w", w.p.op, closedErr(err))
		}
		w.t.sent += int64(len(req))
		w.inFlight += k
		w.sendAt = (w.sendAt + k) % w.ring
		n -= k
	}
	return nil
}

// flush sends the requests that replies freed, unless the run is stopping.
func (w *window) flush() error {
	n := w.owed
	w.owed = 0
	if w.stop.Load() {
		return nil
	}
	return w.send(n)
}

// starve is the reader's starving hook: about to wait for replies, send
// what has been freed once it is worth a write.
func (w *window) starve() error {
	if w.owed >= w.refill {
		return w.flush()
	}
	return nil
}
