package server

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Transactions: MULTI queues, EXEC runs the queue alone, DISCARD drops it.
//
// Isolation: a connection marks itself busy while it runs the commands of
// a batch (not around network writes, so a client that does not read
// cannot stall anyone), and EXEC closes the gate and waits until no other
// connection is busy, so no other client's command runs between the
// queued commands of a transaction. WATCH is checked inside, after every
// write that could touch a watched key has finished.

// txState is a connection's transaction: the MULTI flag, the queue, and
// the WATCH bookkeeping (see watch.go).
type txState struct {
	active bool // between MULTI and EXEC/DISCARD
	failed bool // a command was refused while queuing: EXEC aborts
	// executing: EXEC is running the queue; replies are not written out
	// before it ends, so the gate is never left open midway.
	executing bool
	queue     []queuedCmd
	buf       []byte // the queued arguments, copied out of the read buffer
	// queuedArgs counts the queued arguments (8 bytes each in queue).
	queuedArgs int
	args       [][]byte

	dirty   atomic.Bool
	watched []string
	// watchedExpiry[i] is watched[i]'s expiry time (Unix ms) when WATCH
	// found it live with one, else 0: EXEC aborts once such a time has
	// passed, as in Redis since 6.0.9, because expiring is a change the
	// key's writers never announce (keyChanged) when nobody reads it.
	watchedExpiry []int64
}

// queuedCmd is one queued command: its spec and its arguments' end
// offsets in txState.buf.
type queuedCmd struct {
	spec *commandSpec
	ends []int
}

// txRefused marks the transaction failed when a command is refused while
// queuing (unknown, wrong arity, not authenticated), as Redis does.
func (c *conn) txRefused() {
	if c.tx.active {
		c.tx.failed = true
	}
}

// queue copies a command into the transaction and answers +QUEUED.
func (c *conn) queue(spec *commandSpec, args [][]byte) {
	if spec.flags&flagNoMulti != 0 {
		c.errorReply("ERR Command not allowed inside a transaction")
		c.tx.failed = true
		return
	}
	if c.tx.failed {
		// EXEC will refuse the transaction: no sense keeping its
		// commands (Redis does the same).
		c.out = append(c.out, "+QUEUED\r\n"...)
		return
	}
	// The queue is requests not yet run: with the buffered ones it must
	// fit client-query-buffer-limit, as in Redis 7.4, or the connection
	// is closed.
	queued := len(c.tx.buf) + 8*c.tx.queuedArgs + c.w - c.r
	for _, a := range args {
		queued += len(a) + 8
	}
	if limit := c.srv.cfg.MaxQueryBytes; queued > limit {
		c.out = appendError(c.out, fmt.Sprintf("ERR MULTI queue of %d bytes and the requests after it exceed the query buffer limit of %d bytes (client-query-buffer-limit)", queued, limit))
		c.srv.stats.queryLimitClosed.Add(1)
		c.closing, c.linger = true, true
		return
	}
	c.tx.queuedArgs += len(args)
	q := queuedCmd{spec: spec, ends: make([]int, len(args))}
	for i, a := range args {
		c.tx.buf = append(c.tx.buf, a...)
		q.ends[i] = len(c.tx.buf)
	}
	c.tx.queue = append(c.tx.queue, q)
	c.out = append(c.out, "+QUEUED\r\n"...)
}

func cmdMulti(c *conn, _ [][]byte) {
	if c.tx.active {
		c.errorReply("ERR MULTI calls can not be nested")
		return
	}
	c.tx.active = true
	c.out = appendOK(c.out)
}

func cmdDiscard(c *conn, _ [][]byte) {
	if !c.tx.active {
		c.errorReply("ERR DISCARD without MULTI")
		return
	}
	c.endTx()
	c.out = appendOK(c.out)
}

// endTx drops the queue and the watches.
func (c *conn) endTx() {
	c.tx.active, c.tx.failed = false, false
	for i := range c.tx.queue {
		c.tx.queue[i] = queuedCmd{}
	}
	c.tx.queue = c.tx.queue[:0]
	c.tx.buf = c.tx.buf[:0]
	c.tx.queuedArgs = 0
	c.unwatchAll()
	// A big transaction must not pin its buffers for the connection's life.
	if cap(c.tx.buf) > 4*c.srv.cfg.MaxReplyBytes {
		c.tx.buf = nil
	}
}

func cmdExec(c *conn, _ [][]byte) {
	if !c.tx.active {
		c.errorReply("ERR EXEC without MULTI")
		return
	}
	if c.tx.failed {
		c.endTx()
		c.errorReply("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	// From here until the queue has run no other connection runs a
	// command: those in a batch finish it (or reach a network write)
	// first, and none starts another.
	c.srv.closeGate(c)
	defer c.srv.openGate(c)
	if c.tx.dirty.Load() || c.watchedExpired() {
		c.endTx()
		c.out = append(c.out, "*-1\r\n"...)
		return
	}
	// WATCHed keys stop mattering once EXEC runs, as in Redis: the queue's
	// own writes must not mark anything dirty for a later transaction.
	c.unwatchAll()
	c.tx.executing = true
	c.out = appendArray(c.out, len(c.tx.queue))
	start := 0
	for _, q := range c.tx.queue {
		c.tx.args = c.tx.args[:0]
		for _, end := range q.ends {
			c.tx.args = append(c.tx.args, c.tx.buf[start:end:end])
			start = end
		}
		c.commands++
		if c.outDropped && q.spec.flags&flagReadonly != 0 {
			// The client is closed for its output: a read has nothing
			// to give it (Redis runs it and drops the reply).
			continue
		}
		if q.spec.flags&flagDrain != 0 {
			c.fillHoles()
		}
		q.spec.run(c, c.tx.args)
		// EXEC's replies are not written before it ends: past the
		// output buffer's hard limit they are dropped and the client is
		// closed, while the rest of the queue still runs, as in Redis.
		if c.overOutputLimit() {
			continue
		}
		// The device reads go as a pipeline's do, within the read
		// budget; their replies, and the others, move to the spill.
		if len(c.holes) >= maxPendingGets || len(c.out) >= c.srv.cfg.MaxReplyBytes {
			c.fillHoles()
		}
		c.spillOut()
	}
	// The queued keys live in tx.buf, which the next MULTI reuses: the
	// transaction's device reads complete before it ends.
	c.fillHoles()
	c.tx.executing = false
	c.endTx()
}

// EXEC's replies are all sent once it ends, as Redis sends them, and are
// held to the client-output-buffer-limit meanwhile. They are kept in
// chunks (the spill) rather than in one growing buffer: a transaction of
// big values never copies what it gathered to grow a buffer, and leaves
// no garbage behind but what it dropped. A chunk is MaxReplyBytes of
// small replies, or a big reply alone, each allocated at its size.

// spillOut moves out to the spill once it holds MaxReplyBytes, unless a
// hole in it still waits for the device (fillHoles spills those replies
// as they complete).
func (c *conn) spillOut() {
	if len(c.holes) != 0 || len(c.out) < c.srv.cfg.MaxReplyBytes {
		return
	}
	c.spill = append(c.spill, c.out)
	c.spillBytes += len(c.out)
	c.out = make([]byte, 0, 16<<10)
}

// writeSpill writes the spilled replies, unless an earlier write failed
// (recorded in *err), and drops them.
func (c *conn) writeSpill(err *error) {
	for i := range c.spill {
		c.writeCounted(&c.spill[i], err)
	}
	c.dropSpill()
}

// dropSpill lets the spilled replies go.
func (c *conn) dropSpill() {
	clear(c.spill)
	c.spill = c.spill[:0]
	c.spillBytes = 0
}

// execGate lets EXEC run alone at the cost of one store to the
// connection's own busy flag and one load of a read-mostly word per batch,
// where a sync.RWMutex would make every batch of every connection write
// one shared counter. It is Dekker's handshake on sequentially consistent
// atomics: a connection sets busy, then loads closed; EXEC sets closed,
// then loads every busy; one of the two sees the other.
type execGate struct {
	closed atomic.Bool
	mu     sync.Mutex // held by the EXEC that closed the gate
}

// enter marks c busy, waiting first while an EXEC runs.
func (c *conn) enter() {
	g := &c.srv.exclusive
	for {
		c.busy.Store(true)
		if !g.closed.Load() {
			return
		}
		c.busy.Store(false)
		g.mu.Lock() // until the EXEC is done
		g.mu.Unlock()
	}
}

// closeGate makes c's EXEC the only thing running: it closes the gate and
// waits for every other connection to finish its batch or reach a
// network write. A connection registered after the wait began sees the
// gate closed before it runs anything.
func (s *Server) closeGate(c *conn) {
	c.busy.Store(false)
	s.exclusive.mu.Lock()
	s.exclusive.closed.Store(true)
	s.mu.Lock()
	others := make([]*conn, 0, len(s.conns))
	for o := range s.conns {
		if o != c {
			others = append(others, o)
		}
	}
	s.mu.Unlock()
	for _, o := range others {
		for o.busy.Load() {
			runtime.Gosched()
		}
	}
	c.busy.Store(true)
}

// openGate lets the other connections run again.
func (s *Server) openGate(c *conn) {
	s.exclusive.closed.Store(false)
	s.exclusive.mu.Unlock()
}

func init() {
	const f = flagNoScript | flagLoading | flagStale
	registerCommands(
		&commandSpec{name: "multi", arity: 1, flags: f | flagFast | flagAllowBusy | flagTxControl, acl: aclTransaction, run: cmdMulti, group: "transactions", summary: "Starts a transaction."},
		&commandSpec{name: "exec", arity: 1, flags: f | flagSkipSlowlog | flagTxControl | flagDrain, acl: aclTransaction, run: cmdExec, group: "transactions", summary: "Executes all commands in a transaction."},
		&commandSpec{name: "discard", arity: 1, flags: f | flagFast | flagAllowBusy | flagTxControl, acl: aclTransaction, run: cmdDiscard, group: "transactions", summary: "Discards a transaction."},
		&commandSpec{name: "watch", arity: -2, flags: f | flagFast | flagAllowBusy | flagTxControl | flagDrain, acl: aclTransaction, firstKey: 1, lastKey: -1, keyStep: 1, run: cmdWatch, group: "transactions", summary: "Monitors changes to keys to determine the execution of a transaction."},
		&commandSpec{name: "unwatch", arity: 1, flags: f | flagFast | flagAllowBusy, acl: aclTransaction, run: cmdUnwatch, group: "transactions", summary: "Forgets about watched keys of a transaction."},
	)
}
