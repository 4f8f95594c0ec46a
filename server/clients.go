package server

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// connPublished is what a connection shows to CLIENT LIST run by other
// connections: its owner goroutine stores these once per batch (flush),
// others load them.
type connPublished struct {
	name       atomic.Pointer[string]
	user       atomic.Pointer[string]
	lastActive atomic.Int64 // unix nanoseconds of the last batch
	cmd        atomic.Pointer[commandSpec]
	readBuffer atomic.Int64 // len(rbuf)
	queryBytes atomic.Int64 // unanswered bytes buffered
	multi      atomic.Int64 // commands queued in MULTI; -1 outside
}

// publish stores the connection's state for CLIENT LIST, writing only
// what changed since the last batch (the owner keeps the last values).
func (c *conn) publish() {
	p, last := &c.pub, &c.published
	p.lastActive.Store(time.Now().UnixNano())
	if c.lastCmd != last.cmd && c.lastCmd != nil {
		last.cmd = c.lastCmd
		p.cmd.Store(c.lastCmd)
	}
	multi := int64(-1)
	if c.tx.active {
		multi = int64(len(c.tx.queue))
	}
	for _, v := range []struct {
		now  int64
		last *int64
		pub  *atomic.Int64
	}{{int64(len(c.rbuf)), &last.readBuffer, &p.readBuffer}, {int64(c.w - c.r), &last.queryBytes, &p.queryBytes}, {multi, &last.multi, &p.multi}} {
		if v.now != *v.last {
			*v.last = v.now
			v.pub.Store(v.now)
		}
	}
}

// lastPublished is what publish stored last, kept by the owner.
type lastPublished struct {
	cmd                           *commandSpec
	readBuffer, queryBytes, multi int64
}

// setName sets the connection's name (CLIENT SETNAME, HELLO SETNAME).
func (c *conn) setName(name []byte) {
	c.name = append(c.name[:0], name...)
	s := string(name)
	c.pub.name.Store(&s)
}

// socketFD is the connection's file descriptor number, for CLIENT LIST.
func socketFD(nc net.Conn) int {
	tc, ok := rawConn(nc).(*net.TCPConn)
	if !ok {
		return -1
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// clientLine is the connection's CLIENT LIST line, in Redis 7.0's field
// order. Buffer sizes are tierbench's own: rbs is the read buffer, qbuf
// the bytes not yet answered, omem 0 as replies are written per batch.
func (c *conn) clientLine(now time.Time) string {
	p := &c.pub
	name := ""
	if n := p.name.Load(); n != nil {
		name = *n
	}
	user := "default"
	if u := p.user.Load(); u != nil {
		user = *u
	}
	cmd := "NULL"
	if spec := p.cmd.Load(); spec != nil {
		cmd = spec.name
	}
	flags := "N"
	multi := p.multi.Load()
	if multi >= 0 {
		flags = "x"
	}
	idle := now.Sub(time.Unix(0, p.lastActive.Load()))
	rbs, qbuf := p.readBuffer.Load(), p.queryBytes.Load()
	var addr, laddr string
	if c.nc != nil {
		addr, laddr = c.nc.RemoteAddr().String(), c.nc.LocalAddr().String()
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=0 sub=0 psub=0 ssub=0 multi=%d qbuf=%d qbuf-free=%d argv-mem=0 multi-mem=0 rbs=%d rbp=%d obl=0 oll=0 omem=0 tot-mem=%d events=r cmd=%s user=%s redir=-1 resp=2",
		c.id, addr, laddr, c.fd, name, int64(now.Sub(c.created).Seconds()), int64(idle.Seconds()), flags,
		multi, qbuf, rbs-qbuf, rbs, rbs, rbs, cmd, user)
}

// clientList is CLIENT LIST: every connection, by id, optionally only
// those whose id is in ids.
func (s *Server) clientList(self *conn, ids map[int64]bool) string {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		if ids == nil || ids[c.id] {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(conns, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
	self.publish()
	now := time.Now()
	var b strings.Builder
	for _, c := range conns {
		b.WriteString(c.clientLine(now))
		b.WriteByte('\n')
	}
	return b.String()
}

func cmdClient(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity := func(n int) bool {
		if len(args) != n {
			c.wrongArity("client|" + sub)
			return false
		}
		return true
	}
	switch sub {
	case "id":
		if arity(2) {
			c.out = appendInt(c.out, c.id)
		}
	case "setname":
		if !arity(3) {
			return
		}
		if !validClientName(args[2]) {
			c.errorReply(errClientName)
			return
		}
		c.setName(args[2])
		c.out = appendOK(c.out)
	case "getname":
		if !arity(2) {
			return
		}
		if len(c.name) == 0 {
			c.out = appendNull(c.out)
		} else {
			c.out = appendBulk(c.out, c.name)
		}
	case "info":
		if arity(2) {
			c.publish()
			c.out = appendBulkString(c.out, c.clientLine(time.Now())+"\n")
		}
	case "list":
		c.clientListCommand(args[2:])
	case "setinfo":
		if arity(4) {
			c.out = appendOK(c.out)
		}
	case "no-evict", "no-touch":
		if arity(3) {
			c.out = appendOK(c.out)
		}
	default:
		c.errorReply("ERR unknown subcommand '" + string(truncate(args[1], 128)) + "'. Try CLIENT HELP.")
	}
}

// clientListCommand answers CLIENT LIST [TYPE normal] [ID id ...].
func (c *conn) clientListCommand(opts [][]byte) {
	var ids map[int64]bool
	for i := 0; i < len(opts); i++ {
		switch strings.ToLower(string(opts[i])) {
		case "type":
			if i+1 >= len(opts) {
				c.errorReply("ERR syntax error")
				return
			}
			switch strings.ToLower(string(opts[i+1])) {
			case "normal":
			case "master", "replica", "slave", "pubsub":
				ids = map[int64]bool{} // tierbench has no such clients
			default:
				c.errorReply("ERR Unknown client type '" + string(truncate(opts[i+1], 128)) + "'")
				return
			}
			i++
		case "id":
			if i+1 >= len(opts) {
				c.errorReply("ERR syntax error")
				return
			}
			if ids == nil {
				ids = map[int64]bool{}
			}
			for i++; i < len(opts); i++ {
				id, err := strconv.ParseInt(string(opts[i]), 10, 64)
				if err != nil || id <= 0 {
					c.errorReply("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			c.errorReply("ERR syntax error")
			return
		}
	}
	c.out = appendBulkString(c.out, c.srv.clientList(c, ids))
}
