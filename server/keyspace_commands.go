package server

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tierbench/tierbench/server/store"
)

// The string commands beyond GET/SET key value, and the commands that walk
// the keyspace. Each command that reads and then writes a key does both in
// one store.Modify, with the key's index bucket latched, so that no other
// client's write comes between (SET NX, GETSET, APPEND, EXPIRE ...).

func init() {
	registerCommands(
		&commandSpec{name: "set", arity: -3, flags: flagWrite | flagDenyOOM | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdSet, group: "string", summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."},
		&commandSpec{name: "setex", arity: 4, flags: flagWrite | flagDenyOOM | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdSetex, group: "string", summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."},
		&commandSpec{name: "psetex", arity: 4, flags: flagWrite | flagDenyOOM | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdPsetex, group: "string", summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."},
		&commandSpec{name: "setnx", arity: 3, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdSetnx, group: "string", summary: "Set the string value of a key only when the key doesn't exist."},
		&commandSpec{name: "getset", arity: 3, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdGetset, group: "string", summary: "Returns the previous string value of a key after setting it to a new value."},
		&commandSpec{name: "getdel", arity: 2, flags: flagWrite | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdGetdel, group: "string", summary: "Returns the string value of a key after deleting the key."},
		&commandSpec{name: "append", arity: 3, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdAppend, group: "string", summary: "Appends a string to the value of a key. Creates the key if it doesn't exist."},
		&commandSpec{name: "strlen", arity: 2, flags: flagReadonly | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdStrlen, group: "string", summary: "Returns the length of a string value."},
		&commandSpec{name: "type", arity: 2, flags: flagReadonly | flagFast | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdType, group: "generic", summary: "Determines the type of value stored at a key."},
		&commandSpec{name: "scan", arity: -2, flags: flagReadonly | flagDrain, acl: aclKeyspace, run: cmdScan, group: "generic", summary: "Iterates over the key names in the database."},
		&commandSpec{name: "keys", arity: 2, flags: flagReadonly | flagDrain, acl: aclKeyspace | aclDangerous, run: cmdKeys, group: "generic", summary: "Returns all key names that match a pattern."},
	)
}

// keyOpKind is the Modify step keyOp runs.
type keyOpKind uint8

const (
	kopSet keyOpKind = iota
	kopGetSet
	kopGetDel
	kopAppend
	kopExpire
	kopPersist
)

// keyspaceState is a connection's scratch for the commands of this file and
// expiry_commands.go: keyOp's inputs and results, so that its function
// value is bound once (fn) and a Modify allocates nothing.
type keyspaceState struct {
	fn func(e store.Entry) (store.Change, error)

	op       keyOpKind
	value    []byte // the value to write (SET, GETSET, APPEND)
	expireAt int64  // SET: the new expiry (0: none); EXPIRE: the new time
	set      setArgs
	expire   expireFlags

	old      store.Entry // what the key held; its value is valid until the session's next call
	wrote    bool        // the step changed the key
	n        int64       // the integer reply (APPEND, EXPIRE, PERSIST)
	appended []byte      // APPEND's new value

	scanKeys []byte // SCAN and KEYS: the keys to reply with, end to end
	scanEnds []int
}

// keyOp is the store.Modify step of the command in c.ks: it sees the key
// as it is and decides the write.
func (c *conn) keyOp(e store.Entry) (store.Change, error) {
	ks := &c.ks
	ks.old, ks.wrote = e, false
	keep := store.Change{Op: store.Keep}
	switch ks.op {
	case kopSet:
		if (ks.set.nx && e.Live) || (ks.set.xx && !e.Live) {
			return keep, nil
		}
		at := ks.expireAt
		if ks.set.keepTTL {
			at = e.ExpireAt
		}
		ks.wrote = true
		return store.Change{Op: store.Put, Value: ks.value, ExpireAt: at}, nil
	case kopGetSet:
		ks.wrote = true
		return store.Change{Op: store.Put, Value: ks.value}, nil
	case kopGetDel:
		if !e.Live {
			return keep, nil
		}
		ks.wrote = true
		return store.Change{Op: store.Remove}, nil
	case kopAppend:
		ks.appended = append(ks.appended[:0], e.Value...)
		ks.appended = append(ks.appended, ks.value...)
		ks.n, ks.wrote = int64(len(ks.appended)), true
		return store.Change{Op: store.Put, Value: ks.appended, ExpireAt: e.ExpireAt}, nil
	case kopExpire:
		ks.n = 0
		if !e.Live || !ks.expire.allows(e.ExpireAt, ks.expireAt) {
			return keep, nil
		}
		ks.n, ks.wrote = 1, true
		if ks.expireAt <= c.sess.Now() {
			return store.Change{Op: store.Remove}, nil
		}
		return store.Change{Op: store.Put, Value: e.Value, ExpireAt: ks.expireAt}, nil
	case kopPersist:
		ks.n = 0
		if !e.Live || e.ExpireAt == 0 {
			return keep, nil
		}
		ks.n, ks.wrote = 1, true
		return store.Change{Op: store.Put, Value: e.Value}, nil
	}
	return keep, nil
}

// modify runs the step set up in c.ks on key; false means the store failed
// and the error is answered. A change that landed is told to WATCH.
func (c *conn) modify(key []byte, op keyOpKind, wantValue bool) bool {
	c.ks.op = op
	if err := c.sess.Modify(key, wantValue, c.ks.fn); err != nil {
		c.storeError(err)
		return false
	}
	if c.ks.wrote {
		c.keyChanged(key)
	}
	return true
}

// setArgs are SET's options.
type setArgs struct {
	nx, xx, get, keepTTL bool
	unit                 expireUnit // 0: no expiry given
	expire               []byte
}

// expireUnit says how an expiry argument reads: relative or absolute,
// seconds or milliseconds.
type expireUnit uint8

const (
	unitNone expireUnit = iota
	unitEX
	unitPX
	unitEXAT
	unitPXAT
)

// parseSetArgs reads SET's options as Redis 7 does: case-insensitive,
// NX with XX, KEEPTTL with an expiry, and two kinds of expiry refused with
// a syntax error; the same option twice is allowed, the last one counts.
func parseSetArgs(opts [][]byte, sa *setArgs) bool {
	*sa = setArgs{}
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		hasNext := i+1 < len(opts)
		timed := func(u expireUnit) bool {
			if !hasNext || sa.keepTTL || (sa.unit != unitNone && sa.unit != u) {
				return false
			}
			sa.unit, sa.expire = u, opts[i+1]
			i++
			return true
		}
		ok := false
		switch {
		case equalFoldASCII(o, "nx"):
			ok, sa.nx = !sa.xx, true
		case equalFoldASCII(o, "xx"):
			ok, sa.xx = !sa.nx, true
		case equalFoldASCII(o, "get"):
			ok, sa.get = true, true
		case equalFoldASCII(o, "keepttl"):
			ok, sa.keepTTL = sa.unit == unitNone, true
		case equalFoldASCII(o, "ex"):
			ok = timed(unitEX)
		case equalFoldASCII(o, "px"):
			ok = timed(unitPX)
		case equalFoldASCII(o, "exat"):
			ok = timed(unitEXAT)
		case equalFoldASCII(o, "pxat"):
			ok = timed(unitPXAT)
		}
		if !ok {
			return false
		}
	}
	return true
}

// expireAt turns SET's (or SETEX's) expiry argument into Unix milliseconds
// as Redis does: a positive integer, not overflowing once in milliseconds
// and added to the clock. On a bad value it answers Redis's error, naming
// the command, and returns false.
func (c *conn) expireAt(arg []byte, unit expireUnit, cmd string) (int64, bool) {
	ms, ok := parseInt(arg)
	if !ok {
		c.errorReply(errNotInteger.Error())
		return 0, false
	}
	seconds := unit == unitEX || unit == unitEXAT
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		c.invalidExpireTime(cmd)
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if unit == unitEX || unit == unitPX {
		ms += c.sess.Now() // wraps negative on overflow, as in Redis
	}
	if ms <= 0 {
		c.invalidExpireTime(cmd)
		return 0, false
	}
	return ms, true
}

func (c *conn) invalidExpireTime(cmd string) {
	c.errorReply("ERR invalid expire time in '" + cmd + "' command")
}

func cmdSet(c *conn, args [][]byte) {
	if len(args) == 3 && c.srv.colls.n.Load() == 0 {
		// The plain SET, a benchmark's: no option to parse and, while no
		// key holds a collection, none to replace.
		c.upsert(args[1], args[2], 0)
		return
	}
	sa := &c.ks.set
	if !parseSetArgs(args[3:], sa) {
		c.errorReply("ERR syntax error")
		return
	}
	var at int64
	if sa.unit != unitNone {
		var ok bool
		if at, ok = c.expireAt(sa.expire, sa.unit, "set"); !ok {
			return
		}
	}
	if c.srv.colls.holds(args[1]) {
		// A list, set, hash or sorted set: GET refuses it, NX finds the
		// key taken, anything else replaces it (XX finds it present).
		switch {
		case sa.get:
			c.errorReply(errWrongType)
			return
		case sa.nx:
			c.out = appendNull(c.out)
			return
		}
		c.srv.colls.remove(args[1])
		sa.xx, sa.keepTTL = false, false
	}
	if !sa.nx && !sa.xx && !sa.get && !sa.keepTTL {
		c.upsert(args[1], args[2], at)
		return
	}
	c.ks.value, c.ks.expireAt = args[2], at
	if !c.modify(args[1], kopSet, sa.get) {
		return
	}
	switch {
	case sa.get:
		c.appendOld()
	case c.ks.wrote:
		c.out = appendOK(c.out)
	default:
		c.out = appendNull(c.out)
	}
}

// appendOld answers the value the key held before the command, or null.
func (c *conn) appendOld() {
	if c.ks.old.Live {
		c.out = appendBulk(c.out, c.ks.old.Value)
	} else {
		c.out = appendNull(c.out)
	}
}

func cmdSetex(c *conn, args [][]byte)  { c.setWithExpiry(args, unitEX, "setex") }
func cmdPsetex(c *conn, args [][]byte) { c.setWithExpiry(args, unitPX, "psetex") }

// setWithExpiry is SETEX and PSETEX: key, time, value.
func (c *conn) setWithExpiry(args [][]byte, unit expireUnit, cmd string) {
	at, ok := c.expireAt(args[2], unit, cmd)
	if !ok {
		return
	}
	c.srv.colls.remove(args[1]) // SETEX replaces a key of any type
	c.upsert(args[1], args[3], at)
}

// upsert is SET without NX, XX, GET or KEEPTTL (at: the expiry time in Unix
// ms, 0 for none): an upsert, which never waits for the device, answered OK.
func (c *conn) upsert(key, value []byte, at int64) {
	if err := c.sess.UpsertExpire(key, value, at); err != nil {
		c.storeError(err)
		return
	}
	c.keyChanged(key)
	c.out = appendOK(c.out)
}

func cmdSetnx(c *conn, args [][]byte) {
	if c.srv.colls.holds(args[1]) {
		c.out = appendInt(c.out, 0)
		return
	}
	c.ks.set, c.ks.value, c.ks.expireAt = setArgs{nx: true}, args[2], 0
	if c.modify(args[1], kopSet, false) {
		c.out = appendInt(c.out, int64(boolInt(c.ks.wrote)))
	}
}

// wrongType answers WRONGTYPE when key holds a list, set, hash or sorted
// set, for the commands that read a string.
func (c *conn) wrongType(key []byte) bool {
	if c.srv.colls.holds(key) {
		c.errorReply(errWrongType)
		return true
	}
	return false
}

func cmdGetset(c *conn, args [][]byte) {
	if c.wrongType(args[1]) {
		return
	}
	c.ks.value = args[2]
	if c.modify(args[1], kopGetSet, true) {
		c.appendOld()
	}
}

func cmdGetdel(c *conn, args [][]byte) {
	if c.wrongType(args[1]) {
		return
	}
	if c.modify(args[1], kopGetDel, true) {
		c.appendOld()
	}
}

func cmdAppend(c *conn, args [][]byte) {
	if c.wrongType(args[1]) {
		return
	}
	c.ks.value = args[2]
	if c.modify(args[1], kopAppend, true) {
		c.out = appendInt(c.out, c.ks.n)
	}
}

func cmdStrlen(c *conn, args [][]byte) {
	if c.wrongType(args[1]) {
		return
	}
	e, err := c.sess.Lookup(args[1])
	if err != nil {
		c.storeError(err)
		return
	}
	c.out = appendInt(c.out, int64(len(e.Value)))
}

func cmdType(c *conn, args [][]byte) {
	if typ := c.srv.colls.typeOf(args[1]); typ != "" {
		c.out = appendSimple(c.out, typ)
		return
	}
	e, err := c.sess.Lookup(args[1])
	switch {
	case err != nil:
		c.storeError(err)
	case e.Live:
		c.out = appendSimple(c.out, "string")
	default:
		c.out = appendSimple(c.out, "none")
	}
}

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	match    []byte // nil: every key
	count    int
	typeName []byte // nil: any type
}

// parseScanOptions reads them as Redis 7 does, answering its error.
func (c *conn) parseScanOptions(opts [][]byte) (scanOptions, bool) {
	so := scanOptions{count: 10}
	for i := 0; i < len(opts); i += 2 {
		if i+1 >= len(opts) {
			c.errorReply("ERR syntax error")
			return so, false
		}
		switch v := opts[i+1]; {
		case equalFoldASCII(opts[i], "count"):
			n, ok := parseInt(v)
			if !ok {
				c.errorReply(errNotInteger.Error())
				return so, false
			}
			if n < 1 {
				c.errorReply("ERR syntax error")
				return so, false
			}
			so.count = int(min(n, 1<<20))
		case equalFoldASCII(opts[i], "match"):
			so.match = v
			if len(v) == 1 && v[0] == '*' {
				so.match = nil
			}
		case equalFoldASCII(opts[i], "type"):
			so.typeName = v
		default:
			c.errorReply("ERR syntax error")
			return so, false
		}
	}
	return so, true
}

// collectKey keeps a key the scan returned if it matches.
func (c *conn) collectKey(so *scanOptions, key []byte) { c.collectTyped(so, key, "string") }

// collectCollections keeps the matching keys of lists, sets, hashes and
// sorted sets, which live beside the store: a scan returns them with its
// last call.
func (c *conn) collectCollections(so *scanOptions) {
	cs := &c.srv.colls
	if cs.n.Load() == 0 {
		return
	}
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	for k, col := range cs.m {
		c.collectTyped(so, []byte(k), [...]string{"", "list", "set", "hash", "zset"}[col.kind])
	}
}

func (c *conn) collectTyped(so *scanOptions, key []byte, typ string) {
	if so.typeName != nil && !equalFoldASCII(so.typeName, typ) {
		return
	}
	if so.match != nil && !globMatch(so.match, key) {
		return
	}
	c.ks.scanKeys = append(c.ks.scanKeys, key...)
	c.ks.scanEnds = append(c.ks.scanEnds, len(c.ks.scanKeys))
}

// appendCollected writes the keys collectKey kept as an array.
func (c *conn) appendCollected() {
	c.out = appendArray(c.out, len(c.ks.scanEnds))
	start := 0
	for _, end := range c.ks.scanEnds {
		c.out = appendBulk(c.out, c.ks.scanKeys[start:end])
		start = end
	}
	c.ks.scanKeys, c.ks.scanEnds = c.ks.scanKeys[:0], c.ks.scanEnds[:0]
}

// cmdScan answers SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
// The cursor is the store's (a log position and the scan's end; see
// store.Session.Scan), so its numbers are not Redis's, but it is used the
// same way: start at 0, stop when 0 comes back.
func cmdScan(c *conn, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		c.errorReply("ERR invalid cursor")
		return
	}
	so, ok := c.parseScanOptions(args[2:])
	if !ok {
		return
	}
	next, err := c.sess.Scan(cursor, so.count, func(key []byte) { c.collectKey(&so, key) })
	if err != nil {
		c.ks.scanKeys, c.ks.scanEnds = c.ks.scanKeys[:0], c.ks.scanEnds[:0]
		if err != store.ErrCursor {
			c.storeError(err)
			return
		}
		next = 0 // a cursor no scan returns: the scan is over, as in Redis
	}
	if next == 0 {
		c.collectCollections(&so)
	}
	c.out = appendArray(c.out, 2)
	var num [20]byte
	c.out = appendBulk(c.out, strconv.AppendUint(num[:0], next, 10))
	c.appendCollected()
}

// parseCursor reads a cursor as Redis's strtoul does: decimal digits with an
// optional sign (a minus wraps around 2^64), no leading space; "" is 0.
func parseCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, b = b[0] == '-', b[1:]
		if len(b) == 0 {
			return 0, false // a sign without digits: strtoul stops before it
		}
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// cmdKeys answers KEYS pattern with one whole scan. Like Redis's, it holds
// every matching key in memory at once.
func cmdKeys(c *conn, args [][]byte) {
	so := scanOptions{match: args[1], count: 4096}
	if bytes.Equal(so.match, []byte("*")) {
		so.match = nil
	}
	cursor := uint64(0)
	for {
		next, err := c.sess.Scan(cursor, so.count, func(key []byte) { c.collectKey(&so, key) })
		if err != nil {
			c.ks.scanKeys, c.ks.scanEnds = c.ks.scanKeys[:0], c.ks.scanEnds[:0]
			c.storeError(err)
			return
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	c.collectCollections(&so)
	c.appendCollected()
}
