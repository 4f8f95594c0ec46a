package server

import (
	"errors"

	"github.com/tierbench/tierbench/server/store"
)

// Replies that wait for the device: a GET whose record is on the device
// leaves a hole in out, filled from pend as its read completes.

// fillHoles waits for every pending device read of the batch and merges
// their replies into out at their positions. The reads and the replies
// they gathered are held to MaxPendingReadBytes: the store lets no more
// bytes of reads go at once than the budget left (reads beyond it wait),
// and the replies up to the first read still waiting are handed on (to
// the client, or inside EXEC to the spill) as soon as they reach
// MaxReplyBytes, so completed replies do not pile up behind a slow one.
func (c *conn) fillHoles() {
	if len(c.holes) == 0 {
		return
	}
	c.completion = completeHoles
	limit := c.lim.pendingRead
	var err error
	for c.sess.Pending() > 0 && err == nil {
		if c.closing || c.outDropped {
			// Nobody will read these replies: issue no more reads.
			c.sess.CancelDeferred(c.onComplete)
		}
		c.sess.SetReadBudget(limit - int64(len(c.pend)))
		err = c.sess.CompleteAtLeast(1, c.onComplete)
		if c.overOutputLimit() {
			continue // the reads in flight are still waited for
		}
		if !c.closing && len(c.pend)+len(c.out) >= c.srv.cfg.MaxReplyBytes {
			if !c.emitFilled() {
				c.closing = true
			}
		}
	}
	if c.overOutputLimit() {
		c.holes, c.pend = c.holes[:0], c.pend[:0]
		c.emitted, c.outOff = 0, 0
		return
	}
	c.asm = c.asm[:0]
	prev := c.outOff
	for i := c.emitted; i < len(c.holes); i++ {
		h := &c.holes[i]
		c.asm = append(c.asm, c.out[prev-c.outOff:h.at-c.outOff]...)
		if h.filled {
			c.asm = append(c.asm, c.pend[h.start:h.end]...)
		} else {
			// The store failed to deliver this read: say so in its place
			// rather than shifting every later reply.
			c.asm = appendStoreError(c.asm, errors.Join(errors.New("store: pending read not delivered"), err))
		}
		prev = h.at
	}
	c.asm = append(c.asm, c.out[prev-c.outOff:]...)
	c.out, c.asm = c.asm, c.out
	c.holes = c.holes[:0]
	c.pend = c.pend[:0]
	c.emitted, c.outOff = 0, 0
}

// emitFilled hands on the replies before the first hole still waiting
// for the device, and drops them and their part of pend: it writes them
// to the client or, inside EXEC, where nothing is written before the
// transaction ends, moves them to the spill (see spillOut). Hole offsets
// stay as recorded: out now starts at outOff of them, and holes before
// emitted are gone.
func (c *conn) emitFilled() bool {
	k := c.emitted
	for k < len(c.holes) && c.holes[k].filled {
		k++
	}
	if k == c.emitted || k == len(c.holes) {
		return true // nothing to hand on yet, or all done: the caller merges
	}
	at := c.holes[k].at
	ok := true
	if c.tx.executing {
		c.spillFilled(k, at)
	} else {
		ok = c.writeFilled(k, at)
	}
	c.out = c.out[:copy(c.out, c.out[at-c.outOff:])]
	c.outOff, c.emitted = at, k
	c.pendNext = c.pendNext[:0]
	for i := k; i < len(c.holes); i++ {
		if h := &c.holes[i]; h.filled {
			start := len(c.pendNext)
			c.pendNext = append(c.pendNext, c.pend[h.start:h.end]...)
			h.start, h.end = start, len(c.pendNext)
		}
	}
	c.pend, c.pendNext = c.pendNext, c.pend
	return ok
}

// writeFilled writes the replies of out up to offset at, with the holes
// from emitted to k filled from pend. It leaves the gate during the
// write, as writeMidBatch does.
func (c *conn) writeFilled(k, at int) bool {
	busy := c.busy.Load()
	if busy {
		c.busy.Store(false)
	}
	// Small pieces are gathered in asm; a big reply is written from pend
	// as it is, not copied once more.
	var err error
	if len(c.spill) > 0 {
		c.writeSpill(&err)
	}
	c.asm = c.asm[:0]
	emit := func(b []byte) {
		if len(b) < 64<<10 {
			c.asm = append(c.asm, b...)
			return
		}
		c.writeCounted(&c.asm, &err)
		buf := b
		c.writeCounted(&buf, &err)
	}
	prev := c.outOff
	for i := c.emitted; i < k; i++ {
		h := &c.holes[i]
		emit(c.out[prev-c.outOff : h.at-c.outOff])
		emit(c.pend[h.start:h.end])
		prev = h.at
	}
	emit(c.out[prev-c.outOff : at-c.outOff])
	c.writeCounted(&c.asm, &err)
	if busy {
		c.enter()
	}
	return err == nil
}

// spillFilled moves the replies of out up to offset at, with the holes
// from emitted to k filled from pend, to the spill as one chunk of their
// exact size.
func (c *conn) spillFilled(k, at int) {
	size := at - c.outOff
	for i := c.emitted; i < k; i++ {
		size += c.holes[i].end - c.holes[i].start
	}
	chunk := make([]byte, 0, size)
	prev := c.outOff
	for i := c.emitted; i < k; i++ {
		h := &c.holes[i]
		chunk = append(chunk, c.out[prev-c.outOff:h.at-c.outOff]...)
		chunk = append(chunk, c.pend[h.start:h.end]...)
		prev = h.at
	}
	chunk = append(chunk, c.out[prev-c.outOff:at-c.outOff]...)
	c.spill = append(c.spill, chunk)
	c.spillBytes += len(chunk)
}

// complete receives device read results from CompletePending.
func (c *conn) complete(token uint64, value []byte, st store.Status, err error) {
	if c.completion != completeStatus {
		c.stages.delivered(c.sess.LastRead())
	}
	switch c.completion {
	case completeHoles:
		if token >= uint64(len(c.holes)) {
			return
		}
		h := &c.holes[token]
		h.start = len(c.pend)
		if !c.outDropped && c.overOutputLimitWith(len(value)) {
			c.dropOutput(len(value))
		}
		if c.outDropped {
			h.end, h.filled = h.start, true
			return
		}
		c.pend = growFor(c.pend, len(value), c.lim.pendingRead)
		c.pend = c.appendGetReply(c.pend, value, st, err)
		h.end = len(c.pend)
		h.filled = true
	case completeAppend:
		c.out = c.appendGetReply(c.out, value, st, err)
	case completeStatus:
		c.syncStatus, c.syncErr = st, err
	}
}

// growFor makes room in b for a reply carrying a value of n bytes: for a
// big one it doubles b's capacity, but not past limit (the output
// buffer's hard limit, or the pending reads' budget) unless the reply
// needs it: append grows big slices by a quarter, which leaves about
// twice the garbage behind for each byte kept.
func growFor(b []byte, n int, limit int64) []byte {
	n += 32 // the bulk header and CRLF
	if cap(b)-len(b) >= n || n < 64<<10 {
		return b
	}
	size := max(2*cap(b), len(b)+n)
	if limit > 0 {
		size = min(size, max(int(limit), len(b)+n))
	}
	nb := make([]byte, len(b), size)
	copy(nb, b)
	return nb
}
