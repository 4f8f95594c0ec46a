package server

import (
	"math"
)

// The TTL commands. A TTL change writes the key's value again with its new
// expiry time (records are immutable), so it costs what a SET of the same
// value costs.

func init() {
	expire := func(name string, run func(*conn, [][]byte), summary string) *commandSpec {
		return &commandSpec{name: name, arity: -3, flags: flagWrite | flagFast | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: 1, keyStep: 1, run: run, group: "generic", summary: summary}
	}
	ttl := func(name string, run func(*conn, [][]byte), summary string) *commandSpec {
		return &commandSpec{name: name, arity: 2, flags: flagReadonly | flagFast | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: 1, keyStep: 1, run: run, group: "generic", summary: summary}
	}
	registerCommands(
		expire("expire", cmdExpire, "Sets the expiration time of a key in seconds."),
		expire("pexpire", cmdPexpire, "Sets the expiration time of a key in milliseconds."),
		expire("expireat", cmdExpireat, "Sets the expiration time of a key to a Unix timestamp."),
		expire("pexpireat", cmdPexpireat, "Sets the expiration time of a key to a Unix milliseconds timestamp."),
		ttl("ttl", cmdTTL, "Returns the expiration time in seconds of a key."),
		ttl("pttl", cmdPTTL, "Returns the expiration time in milliseconds of a key."),
		ttl("expiretime", cmdExpiretime, "Returns the expiration time of a key as a Unix timestamp."),
		ttl("pexpiretime", cmdPexpiretime, "Returns the expiration time of a key as a Unix milliseconds timestamp."),
		&commandSpec{name: "persist", arity: 2, flags: flagWrite | flagFast | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdPersist, group: "generic", summary: "Removes the expiration time of a key."},
	)
}

// expireFlags are EXPIRE's NX, XX, GT and LT.
type expireFlags struct{ nx, xx, gt, lt bool }

// allows applies the flags to a key whose expiry is cur (0: none) and a new
// time when, as Redis does: no expiry counts as infinite for GT and LT.
func (f expireFlags) allows(cur, when int64) bool {
	switch {
	case f.nx && cur != 0, f.xx && cur == 0:
		return false
	case f.gt && (cur == 0 || when <= cur):
		return false
	case f.lt && cur != 0 && when >= cur:
		return false
	}
	return true
}

func cmdExpire(c *conn, args [][]byte)    { c.expireGeneric(args, true, true, "expire") }
func cmdPexpire(c *conn, args [][]byte)   { c.expireGeneric(args, true, false, "pexpire") }
func cmdExpireat(c *conn, args [][]byte)  { c.expireGeneric(args, false, true, "expireat") }
func cmdPexpireat(c *conn, args [][]byte) { c.expireGeneric(args, false, false, "pexpireat") }

// expireGeneric is EXPIRE key time [NX|XX|GT|LT] and its kin, checked in
// Redis 7's order: the flags, the integer, overflow; then a missing key
// answers 0, a time already past deletes the key and answers 1.
func (c *conn) expireGeneric(args [][]byte, relative, seconds bool, cmd string) {
	if c.srv.colls.holds(args[1]) {
		c.errorReply(errCollectionTTL)
		return
	}
	var f expireFlags
	for _, o := range args[3:] {
		switch {
		case equalFoldASCII(o, "nx"):
			f.nx = true
		case equalFoldASCII(o, "xx"):
			f.xx = true
		case equalFoldASCII(o, "gt"):
			f.gt = true
		case equalFoldASCII(o, "lt"):
			f.lt = true
		default:
			c.errorReply("ERR Unsupported option " + string(truncate(o, 128)))
			return
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		c.errorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if f.gt && f.lt {
		c.errorReply("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := parseInt(args[2])
	if !ok {
		c.errorReply(errNotInteger.Error())
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.invalidExpireTime(cmd)
			return
		}
		when *= 1000
	}
	var base int64
	if relative {
		base = c.sess.Now()
	}
	if when > math.MaxInt64-base {
		c.invalidExpireTime(cmd)
		return
	}
	c.ks.expireAt, c.ks.expire = when+base, f
	if c.modify(args[1], kopExpire, true) {
		c.out = appendInt(c.out, c.ks.n)
	}
}

func cmdTTL(c *conn, args [][]byte)         { c.ttlGeneric(args[1], false, false) }
func cmdPTTL(c *conn, args [][]byte)        { c.ttlGeneric(args[1], true, false) }
func cmdExpiretime(c *conn, args [][]byte)  { c.ttlGeneric(args[1], false, true) }
func cmdPexpiretime(c *conn, args [][]byte) { c.ttlGeneric(args[1], true, true) }

// ttlGeneric answers -2 for a missing key, -1 for a key without expiry,
// else the time left (or the time itself with abs), in seconds rounded to
// the nearest as Redis rounds, or in milliseconds.
func (c *conn) ttlGeneric(key []byte, ms, abs bool) {
	if c.srv.colls.holds(key) {
		c.out = appendInt(c.out, -1) // collections never expire
		return
	}
	e, err := c.sess.Lookup(key)
	switch {
	case err != nil:
		c.storeError(err)
		return
	case !e.Live:
		c.out = appendInt(c.out, -2)
		return
	case e.ExpireAt == 0:
		c.out = appendInt(c.out, -1)
		return
	}
	t := e.ExpireAt
	if !abs {
		t = max(t-c.sess.Now(), 0)
	}
	if !ms {
		t = (t + 500) / 1000
	}
	c.out = appendInt(c.out, t)
}

// errCollectionTTL refuses a TTL on a list, set, hash or sorted set: they
// live in memory beside the store, which is where expiry times are kept.
const errCollectionTTL = "ERR tierbench keeps expiry times for string keys only, not for lists, sets, hashes or sorted sets"

func cmdPersist(c *conn, args [][]byte) {
	if c.srv.colls.holds(args[1]) {
		c.out = appendInt(c.out, 0) // no expiry to remove
		return
	}
	if c.modify(args[1], kopPersist, true) {
		c.out = appendInt(c.out, c.ks.n)
	}
}
