package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

// conn is one client connection, served by one goroutine.
//
// Buffer ownership: rbuf[r:w] holds the requests not yet answered. The
// arguments of a request are sub-slices of rbuf, and a key handed to
// Session.Read may be used by the store until its read completes, so rbuf
// is compacted or reused only after every pending read of the batch has
// completed (flush does that first). out is the reply stream in order,
// except where a GET's reply waits for the device: such a reply is a hole
// at a recorded offset of out, filled from pend when the reads complete.
type conn struct {
	srv  *Server
	nc   net.Conn
	sess *store.Session
	id   int64

	rbuf []byte
	r, w int
	need int // the request at rbuf[r:] takes at least this many bytes (0: unknown)
	args [][]byte
	// partial is the request at rbuf[r:] parsed so far, when it arrived
	// in part.
	partial partialRequest

	out   []byte
	holes []hole
	pend  []byte // replies of completed device reads, referenced by holes
	// While fillHoles writes replies as their reads complete: out starts
	// at offset outOff of the batch's replies, holes before emitted are
	// written, and pendNext is scratch for compacting pend.
	outOff, emitted int
	pendNext        []byte
	asm             []byte // scratch for merging out and pend
	// spill holds EXEC's replies that come before out, in chunks, while
	// the transaction runs (see spillOut); spillBytes is their length.
	spill      [][]byte
	spillBytes int
	val        []byte // scratch for values read from memory

	// completion routes the results CompletePending delivers.
	completion completionMode
	syncStatus store.Status
	syncErr    error
	onComplete func(token uint64, value []byte, st store.Status, err error)

	// incrDelta is the argument of the INCR/INCRBY in progress; incrFn is
	// bound once so RMW gets a function value without an allocation.
	incrDelta int64
	incrErr   error
	incrFn    func(old []byte, exists bool, dst []byte) ([]byte, error)

	tx txState       // MULTI/EXEC/WATCH, see multi.go
	ks keyspaceState // SET options, EXPIRE, SCAN: see keyspace_commands.go
	// busy: the connection is running commands (see execGate). Its own
	// word, so setting it per batch touches no shared cache line.
	busy atomic.Bool

	// lim: the live limits (CONFIG SET), loaded once per read.
	lim batchLimits
	// outDropped: the replies passed the output buffer's hard limit; they
	// are dropped and the connection closes (see overOutputLimit).
	outDropped bool
	// readDeadline, writeDeadline: a deadline is set on the socket.
	readDeadline, writeDeadline bool

	// authed: user is set (kept apart for the per-command check).
	authed bool
	// authDeadline: a connection that has not authenticated by then is
	// closed (Config.AuthTimeout); zero when it starts authenticated.
	authDeadline time.Time
	user         *aclUser
	name         []byte
	// For CLIENT LIST and CLIENT INFO (see clients.go).
	pub       connPublished
	published lastPublished
	lastCmd   *commandSpec
	created   time.Time
	fd        int
	closing   bool // QUIT or a protocol error: answer, flush, close
	// linger: the client may still be sending when the server closes;
	// see lingerClose.
	linger bool

	// stages times the batch's GETs (stages.go).
	stages connStages

	// Counts for INFO, added to the server's atomics once per batch.
	commands, hits, misses, deviceGets int64
}

// hole is a reply position in out whose bytes come from a device read.
type hole struct {
	at         int // offset in out the reply belongs at
	start, end int // the reply in pend, once filled
	filled     bool
}

// Before closing a connection on QUIT or a protocol error, the server reads
// and drops at most lingerBytes during lingerTime.
const (
	lingerTime  = 200 * time.Millisecond
	lingerBytes = 1 << 20
)

type completionMode uint8

const (
	// completeHoles: tokens index holes; replies go to pend.
	completeHoles completionMode = iota
	// completeAppend: the one pending GET's reply goes to the end of out
	// (used without scatter-gather, where each read is waited for at once).
	completeAppend
	// completeStatus: the one pending read's status is recorded (EXISTS).
	completeStatus
)

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:     s,
		nc:      nc,
		sess:    s.st.NewSession(),
		id:      s.nextID.Add(1),
		rbuf:    make([]byte, initialReadBytes),
		args:    make([][]byte, 0, 16),
		out:     make([]byte, 0, 16<<10),
		created: time.Now(),
		fd:      socketFD(nc),
	}
	if u := s.users.startUser(); u != nil {
		c.login(u)
	} else {
		c.authDeadline = c.created.Add(s.cfg.AuthTimeout)
	}
	c.lim = s.batchLimits()
	c.pub.multi.Store(-1)
	c.published.multi = -1
	c.pub.lastActive.Store(c.created.UnixNano())
	storeMax(&s.stats.maxInputBuffer, initialReadBytes)
	c.onComplete = c.complete
	c.incrFn = c.incr
	c.ks.fn = c.keyOp
	return c
}

// serve reads, answers every complete buffered request, writes the replies
// with one write, and only then reads again: a client that sends faster
// than it reads is held back by TCP, not by server memory.
func (c *conn) serve() {
	defer func() {
		c.unwatchAll()
		c.sess.Close()
		if c.linger {
			c.lingerClose()
		}
		c.nc.Close()
	}()
	for {
		if c.r == c.w {
			c.r, c.w = 0, 0
			// One huge request must not pin its buffer for the
			// connection's life.
			if len(c.rbuf) > maxIdleReadBytes {
				c.rbuf = make([]byte, initialReadBytes)
			}
		}
		if !c.makeRoom() {
			return
		}
		c.lim = c.srv.batchLimits()
		if c.lim.timeout > 0 || !c.authed {
			// Redis's timeout: a client that sends nothing for that
			// long is closed; so is one not authenticated by its
			// authDeadline, whatever it sends.
			var deadline time.Time
			if c.lim.timeout > 0 {
				deadline = time.Now().Add(c.lim.timeout)
			}
			deadline = c.boundUnauthenticated(deadline)
			c.nc.SetReadDeadline(deadline)
			c.readDeadline = true
		} else if c.readDeadline {
			c.nc.SetReadDeadline(time.Time{})
			c.readDeadline = false
		}
		n, err := c.nc.Read(c.rbuf[c.w:])
		c.w += n
		if n > 0 {
			c.stages.startBatch(c.srv, c.id)
			c.srv.stats.readBytes.Add(int64(n))
			c.process()
			if !c.flush() || c.closing {
				return
			}
		}
		if err != nil {
			if !c.authed && isTimeout(err) && !time.Now().Before(c.authDeadline) {
				c.srv.stats.authTimeoutClosed.Add(1)
			}
			return
		}
	}
}

// boundUnauthenticated is deadline (zero: none), made no later than
// authDeadline while c has not authenticated.
func (c *conn) boundUnauthenticated(deadline time.Time) time.Time {
	if !c.authed && (deadline.IsZero() || c.authDeadline.Before(deadline)) {
		return c.authDeadline
	}
	return deadline
}

// lingerClose half-closes the connection and discards what the client
// still sends for a moment: closing a socket with unread input makes the
// kernel send a reset, which can destroy the error reply before the client
// reads it.
func (c *conn) lingerClose() {
	if t, ok := c.nc.(*tls.Conn); ok {
		t.CloseWrite() // close_notify, once the handshake is done
	}
	tc, ok := rawConn(c.nc).(*net.TCPConn)
	if !ok {
		return
	}
	tc.CloseWrite()
	tc.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, tc, lingerBytes)
}

// makeRoom ensures rbuf has space to read into, and space for the whole
// request in progress when its size is known: it compacts the unanswered
// bytes to the front, or grows rbuf up to MaxQueryBytes. A request that
// cannot fit is refused with a protocol error; false means the connection
// is done.
func (c *conn) makeRoom() bool {
	const minRead = 4 << 10
	limit := c.srv.cfg.MaxQueryBytes
	buffered := c.w - c.r
	want := max(c.need, buffered+1)
	if want > limit {
		c.out = appendError(c.out, fmt.Sprintf("ERR Protocol error: request of at least %d bytes exceeds the query buffer limit of %d bytes", want, limit))
		c.srv.stats.rejected.Add(1)
		c.srv.stats.queryLimitClosed.Add(1)
		c.linger = true
		c.flush()
		return false
	}
	// Room for what has arrived, doubling as it arrives, up to what the
	// request needs: a declared 512 MB bulk gets memory as its bytes
	// come, not before (a thousand clients each declaring one and sending
	// nothing more hold a few KiB each), and at most 512 MB and change.
	target := min(max(min(want, 2*buffered), buffered+minRead), limit)
	if c.r+target <= len(c.rbuf) {
		return true
	}
	if target <= len(c.rbuf) {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
		return true
	}
	size := max(2*len(c.rbuf), target)
	if c.need > 0 {
		size = min(size, max(c.need, target))
	}
	nb := make([]byte, min(size, limit))
	storeMax(&c.srv.stats.maxInputBuffer, int64(len(nb)))
	c.w = copy(nb, c.rbuf[c.r:c.w])
	c.r = 0
	c.rbuf = nb
	return true
}

// process answers every complete request in rbuf[r:w]. It holds the
// gate (see multi.go) except around network writes.
func (c *conn) process() {
	c.enter()
	defer c.busy.Store(false)
	// One clock reading for the requests that arrived together (see
	// store.Session.HoldClock), taken again after a write that may wait.
	c.sess.HoldClock()
	defer c.sess.ReleaseClock()
	lim := defaultLimits
	c.prefetchGets(c.rbuf[c.r:c.w])
	for c.r < c.w && !c.closing {
		if c.need > 0 && c.w-c.r < c.need {
			return
		}
		if !c.authed {
			lim = unauthLimits
		} else {
			lim = defaultLimits
		}
		c.stages.beginParse()
		args, n, need, err := c.partial.next(c.rbuf[c.r:c.w], c.args, lim)
		c.args = args[:0]
		if err != nil {
			c.out = appendError(c.out, "ERR "+err.Error())
			c.srv.stats.rejected.Add(1)
			c.closing, c.linger = true, true
			return
		}
		if n == 0 {
			c.need = need
			return
		}
		c.need = 0
		c.r += n
		if len(args) == 0 {
			continue
		}
		c.stages.parsed()
		c.dispatch(args)
		if !c.writeIfDue() {
			return
		}
	}
}

// writeIfDue writes the replies so far when they reached MaxReplyBytes,
// or the pending device reads their count or byte limit; it closes the
// connection on the output buffer's hard limit. False: stop the batch.
func (c *conn) writeIfDue() bool {
	if c.overOutputLimit() {
		return false
	}
	if len(c.out) >= c.srv.cfg.MaxReplyBytes || len(c.holes) >= maxPendingGets || c.spillBytes > 0 {
		if !c.writeMidBatch() {
			c.closing = true
			return false
		}
		c.sess.HoldClock()
	}
	return true
}

// flush completes pending reads, publishes the batch's state and counters
// and writes the replies out. It publishes before writing, so whatever a
// client has been answered is already seen by CLIENT LIST and INFO on every
// other connection (a client told +QUEUED is listed with multi=1). It
// returns false when the connection is broken.
func (c *conn) flush() bool {
	c.fillHoles()
	// The writes answered below must count in DBSIZE on every connection
	// (store.Session.SettleAll), even if this one sends nothing more.
	c.sess.SubmitChecks()
	ready := c.stages.replyReady()
	defer c.stages.written(ready)
	c.publish()
	st := &c.srv.stats
	if c.commands != 0 {
		st.commands.Add(c.commands)
		c.commands = 0
	}
	if c.hits != 0 {
		st.hits.Add(c.hits)
		c.hits = 0
	}
	if c.misses != 0 {
		st.misses.Add(c.misses)
		c.misses = 0
	}
	if c.deviceGets != 0 {
		st.deviceGets.Add(c.deviceGets)
		c.deviceGets = 0
	}
	return c.writeOut()
}

// writeMidBatch writes the replies so far in the middle of a batch. It
// leaves the gate during the network write, so a client that does not
// read holds up no transaction. Inside EXEC nothing is written; the
// pending reads are completed and the replies spilled instead.
func (c *conn) writeMidBatch() bool {
	c.fillHoles()
	if c.tx.executing {
		c.spillOut()
		return true
	}
	c.busy.Store(false)
	ok := c.writeOut()
	c.enter()
	return ok
}

// writeOut fills the holes and writes out to the client.
func (c *conn) writeOut() bool {
	c.fillHoles()
	if c.overOutputLimit() {
		c.out = c.out[:0]
		return false
	}
	var err error
	if len(c.spill) > 0 {
		c.writeSpill(&err)
	}
	if len(c.out) == 0 {
		return err == nil
	}
	c.writeCounted(&c.out, &err)
	// One huge reply (a big MGET) or request (an MSET of a million keys)
	// must not pin its buffers for the connection's life.
	if cap(c.out) > 4*c.srv.cfg.MaxReplyBytes {
		c.out = make([]byte, 0, 16<<10)
	}
	if cap(c.asm) > 4*c.srv.cfg.MaxReplyBytes {
		c.asm = nil
	}
	if cap(c.pend) > 4*c.srv.cfg.MaxReplyBytes {
		c.pend, c.pendNext = nil, nil
	}
	if cap(c.args) > 4096 {
		c.args = make([][]byte, 0, 16)
	}
	return err == nil
}

func (c *conn) appendGetReply(dst, value []byte, st store.Status, err error) []byte {
	switch {
	case err != nil:
		return appendStoreError(dst, err)
	case st == store.Found:
		c.hits++
		return appendBulk(dst, value)
	default:
		c.misses++
		return appendNull(dst)
	}
}

func appendStoreError(dst []byte, err error) []byte {
	return appendError(dst, "ERR "+err.Error())
}

// get appends the reply to GET key: at once when the record is in memory,
// as a hole when it needs the device (scatter-gather), or after waiting
// for the read.
func (c *conn) get(key []byte) {
	token := uint64(len(c.holes))
	c.sess.TimeReads(c.stages.on)
	v, st, err := c.sess.Read(key, c.val[:0], token)
	c.stages.looked()
	if errors.Is(err, store.ErrTooMany) && len(c.holes) > 0 {
		// The session's pending-read table is full: complete the batch so
		// far (its replies stay in place) and issue this read again.
		c.fillHoles()
		v, st, err = c.sess.Read(key, c.val[:0], 0)
	}
	if v != nil {
		c.val = v[:0]
	}
	if err != nil || st != store.Pending {
		if !c.outDropped && c.overOutputLimitWith(len(v)) {
			c.dropOutput(len(v))
		}
		if c.outDropped {
			return
		}
		c.out = growFor(c.out, len(v), c.lim.output.hardBytes)
		c.out = c.appendGetReply(c.out, v, st, err)
		return
	}
	c.deviceGets++
	if c.srv.cfg.ScatterGatherGet {
		c.holes = append(c.holes, hole{at: len(c.out)})
		return
	}
	c.completion = completeAppend
	if err := c.sess.CompletePending(true, c.onComplete); err != nil {
		c.out = appendStoreError(c.out, err)
	}
}

// exists reports whether key is live, waiting for the device if needed.
// The caller has filled the holes first (the command is marked drain), so
// the only read CompletePending can deliver is this one.
func (c *conn) exists(key []byte) (bool, error) {
	v, st, err := c.sess.Read(key, c.val[:0], 0)
	if v != nil {
		c.val = v[:0]
	}
	if err != nil {
		return false, err
	}
	if st != store.Pending {
		return st == store.Found, nil
	}
	c.completion = completeStatus
	c.syncStatus, c.syncErr = store.NotFound, errors.New("store: pending read not delivered")
	if err := c.sess.CompletePending(true, c.onComplete); err != nil {
		return false, err
	}
	return c.syncStatus == store.Found, c.syncErr
}

// writeCounted writes *b (unless an earlier write failed, recorded in
// *err) and empties it.
func (c *conn) writeCounted(b *[]byte, err *error) {
	if len(*b) > 0 && *err == nil {
		storeMax(&c.srv.stats.maxOutputBuffer, int64(len(*b)))
		n, e := c.write(*b)
		c.srv.stats.writtenBytes.Add(int64(n))
		*err = e
	}
	*b = (*b)[:0]
}

// storeMax raises m to v if v is larger.
func storeMax(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}
