package server

import (
	"math"
	"slices"
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

// collections is the typed keyspace.
type collections struct {
	n  atomic.Int64 // keys held
	mu sync.Mutex
	m  map[string]*collection
}

// collection is one typed value; only the field of its kind is used.
type collection struct {
	kind collKind
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
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if col := cs.m[string(key)]; col != nil {
		return [...]string{"", "list", "set", "hash", "zset"}[col.kind]
	}
	return ""
}

// holds reports whether key holds a collection.
func (cs *collections) holds(key []byte) bool { return cs.typeOf(key) != "" }

// remove deletes key's collection; false when it held none.
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
// emptied collection is removed, as Redis removes empty aggregates.
func (c *conn) collCmd(key []byte, kind collKind, create bool, fn func(col *collection) (changed bool)) {
	cs := &c.srv.colls
	cs.mu.Lock()
	col := cs.m[string(key)]
	if col != nil && col.kind != kind {
		cs.mu.Unlock()
		c.errorReply(errWrongType)
		return
	}
	if col == nil {
		// The key may be a string in the store. exists needs the pending
		// reads drained: every collection command is flagged drain.
		cs.mu.Unlock()
		isString, err := c.exists(key)
		if err != nil {
			c.storeError(err)
			return
		}
		if isString {
			c.errorReply(errWrongType)
			return
		}
		cs.mu.Lock()
		if col = cs.m[string(key)]; col == nil && create {
			col = &collection{kind: kind}
			if cs.m == nil {
				cs.m = map[string]*collection{}
			}
			cs.m[string(key)] = col
			cs.n.Add(1)
		} else if col != nil && col.kind != kind {
			cs.mu.Unlock()
			c.errorReply(errWrongType)
			return
		}
	}
	changed := fn(col)
	if col != nil && col.size() == 0 {
		delete(cs.m, string(key))
		cs.n.Add(-1)
	}
	cs.mu.Unlock()
	if changed {
		c.keyChanged(key)
	}
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
		return len(col.zset.entries)
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

// sortedSet orders members by score, then by member bytes.
type sortedSet struct {
	entries []zEntry
	score   map[string]float64
}

type zEntry struct {
	score  float64
	member string
}

func zLess(a, b zEntry) int {
	switch {
	case a.score < b.score:
		return -1
	case a.score > b.score:
		return 1
	}
	return strings.Compare(a.member, b.member)
}

// add sets member's score; true when the member is new.
func (z *sortedSet) add(member string, score float64) bool {
	old, exists := z.score[member]
	if exists {
		if old == score {
			return false
		}
		i, _ := slices.BinarySearchFunc(z.entries, zEntry{old, member}, zLess)
		z.entries = slices.Delete(z.entries, i, i+1)
	}
	if z.score == nil {
		z.score = map[string]float64{}
	}
	z.score[member] = score
	e := zEntry{score, member}
	i, _ := slices.BinarySearchFunc(z.entries, e, zLess)
	z.entries = slices.Insert(z.entries, i, e)
	return !exists
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
