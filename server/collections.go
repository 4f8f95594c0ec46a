package server

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Lists, sets, hashes and sorted sets: enough of them for redis-benchmark's
// default tests (LPUSH, RPUSH, LPOP, RPOP, SADD, SPOP, HSET, ZADD, ZPOPMIN,
// LRANGE) and light use. They live in memory only, in one map beside the
// tiered store, which holds strings: a key is in one or the other. String
// commands check the map only when it holds something (one atomic load
// otherwise), and answer WRONGTYPE for a key of another type as Redis does;
// SET and MSET replace such a key; DEL, EXISTS, DBSIZE and FLUSHALL count
// both. Other commands that read a string key (the expiry helper's APPEND,
// STRLEN, TYPE, ...) ask c.srv.colls.typeOf(key).

const errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

type collKind uint8

const (
	kindList collKind = iota + 1
	kindSet
	kindHash
	kindZSet
)

// collections is the typed keyspace. Locking: mu guards the map and is
// held only to find, add or remove a key, never while a command works on
// a collection, so the string commands' type checks (typeOf) wait for no
// ZADD or LRANGE; each collection has its own lock for its contents. The
// order is mu, then a collection's lock: a holder of a collection's lock
// never takes mu.
type collections struct {
	n  atomic.Int64 // keys held
	mu sync.RWMutex
	m  map[string]*collection
}

// collection is one typed value; only the field of its kind is used.
type collection struct {
	kind collKind // set at creation, never changed: read without mu
	mu   sync.Mutex
	// dead: the collection was emptied and is being removed from the map;
	// a command that finds it there looks the key up again.
	dead bool
	list deque
	set  map[string]struct{}
	hash orderedHash
	zset sortedSet
}

// typeOf is the type of key as TYPE names it ("list", "set", "hash",
// "zset"), or "" when the key holds no collection.
func (cs *collections) typeOf(key []byte) string {
	if cs.n.Load() == 0 {
		return ""
	}
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	if col := cs.m[string(key)]; col != nil {
		return [...]string{"", "list", "set", "hash", "zset"}[col.kind]
	}
	return ""
}

// holds reports whether key holds a collection.
func (cs *collections) holds(key []byte) bool { return cs.typeOf(key) != "" }

// remove deletes key's collection; false when it held none. A command
// still working on the collection finishes on it as if it ran first.
func (cs *collections) remove(key []byte) bool {
	if cs.n.Load() == 0 {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.m[string(key)]; !ok {
		return false
	}
	delete(cs.m, string(key))
	cs.n.Add(-1)
	return true
}

// removeIf deletes key when it still holds col.
func (cs *collections) removeIf(key []byte, col *collection) {
	cs.mu.Lock()
	if cs.m[string(key)] == col {
		delete(cs.m, string(key))
		cs.n.Add(-1)
	}
	cs.mu.Unlock()
}

// flush drops every collection.
func (cs *collections) flush() {
	cs.mu.Lock()
	cs.m = nil
	cs.n.Store(0)
	cs.mu.Unlock()
}

// collCmd runs fn on key's collection of kind, creating it when create is
// set and the key is free; fn's col is nil for a missing key, and fn
// reports whether it changed the collection (watchers are then told). A
// key of another type, as a string or a collection, gets WRONGTYPE. An
// emptied collection is removed, as Redis removes empty aggregates. fn
// runs under the collection's own lock only.
func (c *conn) collCmd(key []byte, kind collKind, create bool, fn func(col *collection) (changed bool)) {
	cs := &c.srv.colls
	for {
		col, ok := c.findColl(key, kind, create)
		if !ok {
			return
		}
		if col == nil {
			fn(nil)
			return
		}
		col.mu.Lock()
		if col.dead {
			col.mu.Unlock()
			cs.removeIf(key, col)
			continue
		}
		changed := fn(col)
		empty := col.size() == 0
		col.dead = empty
		col.mu.Unlock()
		if empty {
			cs.removeIf(key, col)
		}
		if changed {
			c.keyChanged(key)
		}
		return
	}
}

// findColl returns key's collection of kind, creating it when create is
// set and the key is free, or nil for a missing key; false when it
// answered WRONGTYPE (or a store error) instead.
func (c *conn) findColl(key []byte, kind collKind, create bool) (*collection, bool) {
	cs := &c.srv.colls
	cs.mu.RLock()
	col := cs.m[string(key)]
	cs.mu.RUnlock()
	if col != nil {
		if col.kind != kind {
			c.errorReply(errWrongType)
			return nil, false
		}
		return col, true
	}
	// The key may be a string in the store. exists needs the pending
	// reads drained: every collection command is flagged drain.
	isString, err := c.exists(key)
	if err != nil {
		c.storeError(err)
		return nil, false
	}
	if isString {
		c.errorReply(errWrongType)
		return nil, false
	}
	if !create {
		cs.mu.RLock()
		col = cs.m[string(key)]
		cs.mu.RUnlock()
	} else {
		cs.mu.Lock()
		if col = cs.m[string(key)]; col == nil {
			col = &collection{kind: kind}
			if cs.m == nil {
				cs.m = map[string]*collection{}
			}
			cs.m[string(key)] = col
			cs.n.Add(1)
		}
		cs.mu.Unlock()
	}
	if col != nil && col.kind != kind {
		c.errorReply(errWrongType)
		return nil, false
	}
	return col, true
}

func (col *collection) size() int {
	switch col.kind {
	case kindList:
		return col.list.len()
	case kindSet:
		return len(col.set)
	case kindHash:
		return len(col.hash.fields)
	default:
		return col.zset.len()
	}
}

// deque is a ring buffer of strings: pushes and pops at both ends in
// amortized constant time.
type deque struct {
	buf        []string
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) at(i int) string { return d.buf[(d.head+i)%len(d.buf)] }

func (d *deque) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([]string, max(8, 2*len(d.buf)))
	for i := 0; i < d.size; i++ {
		nb[i] = d.at(i)
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushFront(s string) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = s
	d.size++
}

func (d *deque) pushBack(s string) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = s
	d.size++
}

func (d *deque) popFront() string {
	s := d.buf[d.head]
	d.buf[d.head] = ""
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return s
}

func (d *deque) popBack() string {
	i := (d.head + d.size - 1) % len(d.buf)
	s := d.buf[i]
	d.buf[i] = ""
	d.size--
	return s
}

// orderedHash keeps fields in insertion order, as Redis's small hashes
// answer HGETALL.
type orderedHash struct {
	fields, values []string
	index          map[string]int
}

func (h *orderedHash) set(f, v string) bool {
	if i, ok := h.index[f]; ok {
		h.values[i] = v
		return false
	}
	if h.index == nil {
		h.index = map[string]int{}
	}
	h.index[f] = len(h.fields)
	h.fields = append(h.fields, f)
	h.values = append(h.values, v)
	return true
}

// formatScore writes a score as Redis 7.0 does (%.17g, inf and -inf).
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		return "0"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// parseScore parses a score as Redis's strtod does, refusing NaN.
func parseScore(b []byte) (float64, bool) {
	s := string(b)
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || strings.ContainsAny(s, " \t\r\n") || strings.HasPrefix(strings.ToLower(s), "0x") {
		return 0, false
	}
	return f, true
}

// popCount parses the optional count of LPOP, RPOP, SPOP and ZPOPMIN:
// -1 when absent; false (answered) when bad. Extra arguments are a syntax
// error, or for the list pops, whose arity Redis bounds, a wrong arity.
func (c *conn) popCount(args [][]byte, at int, list bool) (int, bool) {
	if len(args) <= at {
		return -1, true
	}
	if len(args) > at+1 {
		if list {
			c.wrongArity(string(lowerASCII(args[0])))
		} else {
			c.errorReply("ERR syntax error")
		}
		return 0, false
	}
	n, ok := parseInt(args[at])
	if !ok {
		c.errorReply("ERR value is out of range, must be positive")
		return 0, false
	}
	if n < 0 {
		c.errorReply("ERR value is out of range, must be positive")
		return 0, false
	}
	return int(min(n, math.MaxInt32)), true
}
