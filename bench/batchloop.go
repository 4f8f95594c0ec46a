// The batch pipeline of the client loop: a connection sends a batch of
// -b requests and the next one only when every reply of it is in.

package bench

import (
	"fmt"
	"time"
)

// batchMark is the thread's figures (replies counted, received, sent)
// from before a connection's batch: a batch that ends after the cell's
// window is taken back out by restoring them.
type batchMark struct {
	counts         replyCounts
	received, sent int64
}

// sendBatch starts batch c.batch: it marks the figures and writes it.
func (l *clientLoop) sendBatch(c *loopConn) {
	t, b := c.t, l.p.Batch
	tb := t.batches
	c.mark = batchMark{counts: t.rr.counts, received: t.rr.received, sent: t.sent}
	c.left = b
	if l.p.op.multiKey() {
		c.left = 1
	}
	if m := tb.mix; m != nil {
		c.left = m.cmdOffsets[c.batch+1] - m.cmdOffsets[c.batch]
		c.mixMark = mixMark{counts: t.mix.counts, ops: t.mix.ops}
		t.mix.pend = t.mix.pend[:0]
		c.sentNs = int64(time.Since(l.t0))
	}
	c.out = tb.req[tb.offsets[c.batch]:tb.offsets[c.batch+1]]
	l.writeOut(c)
}

// batchReplies consumes the batch's replies that arrived; once all have,
// the connection ends its run (stop, or past the window) or sends the next
// batch, as the reference's LightClient does.
func (l *clientLoop) batchReplies(c *loopConn) {
	if l.p.mix != nil {
		l.mixReplies(c)
		return
	}
	t, b := c.t, l.p.Batch
	replies, perReply := b, 1
	if l.p.op.multiKey() {
		replies, perReply = 1, b
	}
	keys := t.batches.keys[c.batch*b : (c.batch+1)*b]
	for c.left > 0 {
		j := replies - c.left
		ok, err := t.rr.tryReply(keys[j*perReply : (j+1)*perReply])
		if err != nil {
			l.fail(c, fmt.Errorf("read %s replies: %w", l.p.op, err))
			return
		}
		if !ok {
			return
		}
		c.left--
	}
	l.batchDone(c)
}

// batchDone ends a batch whose replies are all in: it redraws the batch's
// keys (skewed distributions), drops its figures when it was answered
// past a --start-at window, and sends the next batch unless the run is
// stopping.
func (l *clientLoop) batchDone(c *loopConn) {
	t := c.t
	if l.p.redraw {
		if t.mix != nil {
			t.batches.redrawMixBatch(l.p, c.batch)
		} else {
			t.batches.redrawBatch(l.p, c.batch)
		}
	}
	if !l.end.IsZero() && time.Now().After(l.end) {
		t.rr.counts, t.rr.received, t.sent = c.mark.counts, c.mark.received, c.mark.sent
		if t.mix != nil {
			t.mix.counts, t.mix.ops = c.mixMark.counts, c.mixMark.ops
		}
		l.finish(c)
		return
	}
	if t.mix != nil {
		for _, pl := range t.mix.pend {
			l.mixHists[pl.op].RecordValue(min(max(pl.ns, histLowestNs), histHighestNs))
		}
		t.mix.pend = t.mix.pend[:0]
	}
	if l.stop.Load() {
		l.finish(c)
		return
	}
	if c.batch++; c.batch == t.batches.count() {
		c.batch = 0
	}
	l.sendBatch(c)
}
