package server

import "runtime"

// The list, set, hash and sorted-set commands (see collections.go).

// zaddYieldEvery is how many members ZADD adds between yields of the CPU.
const zaddYieldEvery = 128

func cmdPush(front bool) func(c *conn, args [][]byte) {
	return func(c *conn, args [][]byte) {
		c.collCmd(args[1], kindList, true, func(col *collection) bool {
			for _, v := range args[2:] {
				if front {
					col.list.pushFront(string(v))
				} else {
					col.list.pushBack(string(v))
				}
			}
			c.out = appendInt(c.out, int64(col.list.len()))
			return true
		})
	}
}

func cmdPop(front bool) func(c *conn, args [][]byte) {
	return func(c *conn, args [][]byte) {
		n, ok := c.popCount(args, 2, true)
		if !ok {
			return
		}
		c.collCmd(args[1], kindList, false, func(col *collection) bool {
			if col == nil {
				if n < 0 {
					c.out = appendNull(c.out)
				} else {
					c.out = append(c.out, "*-1\r\n"...)
				}
				return false
			}
			pop := col.list.popBack
			if front {
				pop = col.list.popFront
			}
			if n < 0 {
				c.out = appendBulkString(c.out, pop())
				return true
			}
			n = min(n, col.list.len())
			c.out = appendArray(c.out, n)
			for i := 0; i < n; i++ {
				c.out = appendBulkString(c.out, pop())
			}
			return n > 0
		})
	}
}

// rangeIndexes turns Redis's start/stop (negative from the end) into
// [lo, hi) over n elements.
func rangeIndexes(start, stop int64, n int) (lo, hi int) {
	if start < 0 {
		start += int64(n)
	}
	if stop < 0 {
		stop += int64(n)
	}
	start = max(start, 0)
	if start > stop || start >= int64(n) {
		return 0, 0
	}
	stop = min(stop, int64(n)-1)
	return int(start), int(stop) + 1
}

func cmdLrange(c *conn, args [][]byte) {
	start, ok1 := parseInt(args[2])
	stop, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		c.errorReply(errNotInteger.Error())
		return
	}
	c.collCmd(args[1], kindList, false, func(col *collection) bool {
		if col == nil {
			c.out = appendArray(c.out, 0)
			return false
		}
		lo, hi := rangeIndexes(start, stop, col.list.len())
		c.out = appendArray(c.out, hi-lo)
		for i := lo; i < hi; i++ {
			c.out = appendBulkString(c.out, col.list.at(i))
		}
		return false
	})
}

// cmdCard answers LLEN, SCARD, HLEN and ZCARD.
func cmdCard(kind collKind) func(c *conn, args [][]byte) {
	return func(c *conn, args [][]byte) {
		c.collCmd(args[1], kind, false, func(col *collection) bool {
			n := 0
			if col != nil {
				n = col.size()
			}
			c.out = appendInt(c.out, int64(n))
			return false
		})
	}
}

func cmdSadd(c *conn, args [][]byte) {
	c.collCmd(args[1], kindSet, true, func(col *collection) bool {
		if col.set == nil {
			col.set = map[string]struct{}{}
		}
		added := 0
		for _, m := range args[2:] {
			if _, ok := col.set[string(m)]; !ok {
				col.set[string(m)] = struct{}{}
				added++
			}
		}
		c.out = appendInt(c.out, int64(added))
		return added > 0
	})
}

func cmdSpop(c *conn, args [][]byte) {
	n, ok := c.popCount(args, 2, false)
	if !ok {
		return
	}
	c.collCmd(args[1], kindSet, false, func(col *collection) bool {
		if col == nil {
			if n < 0 {
				c.out = appendNull(c.out)
			} else {
				c.out = appendArray(c.out, 0)
			}
			return false
		}
		one := n < 0
		if one {
			n = 1
		} else {
			n = min(n, len(col.set))
			c.out = appendArray(c.out, n)
		}
		// Map iteration order is random enough for a random pop.
		popped := 0
		for m := range col.set {
			if popped == n {
				break
			}
			delete(col.set, m)
			c.out = appendBulkString(c.out, m)
			popped++
		}
		return popped > 0
	})
}

func cmdSismember(c *conn, args [][]byte) {
	c.collCmd(args[1], kindSet, false, func(col *collection) bool {
		in := 0
		if col != nil {
			if _, ok := col.set[string(args[2])]; ok {
				in = 1
			}
		}
		c.out = appendInt(c.out, int64(in))
		return false
	})
}

func cmdHset(c *conn, args [][]byte) {
	if len(args)%2 != 0 {
		c.wrongArity(string(lowerASCII(args[0])))
		return
	}
	c.collCmd(args[1], kindHash, true, func(col *collection) bool {
		added := 0
		for i := 2; i < len(args); i += 2 {
			if col.hash.set(string(args[i]), string(args[i+1])) {
				added++
			}
		}
		c.out = appendInt(c.out, int64(added))
		return true
	})
}

func cmdHget(c *conn, args [][]byte) {
	c.collCmd(args[1], kindHash, false, func(col *collection) bool {
		if col != nil {
			if i, ok := col.hash.index[string(args[2])]; ok {
				c.out = appendBulkString(c.out, col.hash.values[i])
				return false
			}
		}
		c.out = appendNull(c.out)
		return false
	})
}

func cmdHgetall(c *conn, args [][]byte) {
	c.collCmd(args[1], kindHash, false, func(col *collection) bool {
		if col == nil {
			c.out = appendArray(c.out, 0)
			return false
		}
		c.out = appendArray(c.out, 2*len(col.hash.fields))
		for i, f := range col.hash.fields {
			c.out = appendBulkString(c.out, f)
			c.out = appendBulkString(c.out, col.hash.values[i])
		}
		return false
	})
}

func cmdZadd(c *conn, args [][]byte) {
	if len(args)%2 != 0 {
		if _, ok := parseScore(args[2]); !ok {
			// An option word where a score belongs (NX, XX, GT, LT, CH,
			// INCR): say what is missing rather than "not a float".
			c.errorReply("ERR ZADD options (NX XX GT LT CH INCR) are not supported by tierbench: ZADD key score member [score member ...]")
			return
		}
		c.errorReply("ERR syntax error")
		return
	}
	scores := make([]float64, 0, (len(args)-2)/2)
	for i := 2; i < len(args); i += 2 {
		f, ok := parseScore(args[i])
		if !ok {
			c.errorReply("ERR value is not a valid float")
			return
		}
		scores = append(scores, f)
	}
	c.collCmd(args[1], kindZSet, true, func(col *collection) bool {
		added := 0
		for i, f := range scores {
			if col.zset.add(string(args[3+2*i]), f) {
				added++
			}
			if i%zaddYieldEvery == zaddYieldEvery-1 {
				// A long ZADD lets the other connections' goroutines
				// (and the device's completions) have the CPU now and
				// then, rather than after Go's 10 ms preemption.
				runtime.Gosched()
			}
		}
		c.out = appendInt(c.out, int64(added))
		return true
	})
}

func cmdZpopmin(c *conn, args [][]byte) {
	n, ok := c.popCount(args, 2, false)
	if !ok {
		return
	}
	if n < 0 {
		n = 1
	}
	c.collCmd(args[1], kindZSet, false, func(col *collection) bool {
		if col == nil {
			c.out = appendArray(c.out, 0)
			return false
		}
		n = min(n, col.zset.len())
		c.out = appendArray(c.out, 2*n)
		for range n {
			e := col.zset.popMin()
			c.out = appendBulkString(c.out, e.member)
			c.out = appendBulkString(c.out, formatScore(e.score))
		}
		return n > 0
	})
}

func cmdZscore(c *conn, args [][]byte) {
	c.collCmd(args[1], kindZSet, false, func(col *collection) bool {
		if col != nil {
			if f, ok := col.zset.score[string(args[2])]; ok {
				c.out = appendBulkString(c.out, formatScore(f))
				return false
			}
		}
		c.out = appendNull(c.out)
		return false
	})
}

func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}

func init() {
	const (
		w  = flagWrite | flagDrain
		wd = flagWrite | flagDenyOOM | flagDrain
		r  = flagReadonly | flagDrain
		k1 = 1 // first and last key of the one-key commands below
	)
	spec := func(name string, arity int, flags commandFlags, acl aclCategories, run func(*conn, [][]byte), group, summary string) *commandSpec {
		return &commandSpec{name: name, arity: arity, flags: flags, acl: acl, firstKey: k1, lastKey: k1, keyStep: 1, run: run, group: group, summary: summary}
	}
	registerCommands(
		spec("lpush", -3, wd|flagFast, aclList, cmdPush(true), "list", "Prepends one or more elements to a list (lists live in memory only)."),
		spec("rpush", -3, wd|flagFast, aclList, cmdPush(false), "list", "Appends one or more elements to a list (lists live in memory only)."),
		spec("lpop", -2, w|flagFast, aclList, cmdPop(true), "list", "Returns and removes the first elements of a list."),
		spec("rpop", -2, w|flagFast, aclList, cmdPop(false), "list", "Returns and removes the last elements of a list."),
		spec("lrange", 4, r, aclList, cmdLrange, "list", "Returns a range of elements from a list."),
		spec("llen", 2, r|flagFast, aclList, cmdCard(kindList), "list", "Returns the length of a list."),
		spec("sadd", -3, wd|flagFast, aclSet, cmdSadd, "set", "Adds one or more members to a set (sets live in memory only)."),
		spec("spop", -2, w|flagFast, aclSet, cmdSpop, "set", "Returns one or more random members from a set after removing them."),
		spec("scard", 2, r|flagFast, aclSet, cmdCard(kindSet), "set", "Returns the number of members in a set."),
		spec("sismember", 3, r|flagFast, aclSet, cmdSismember, "set", "Determines whether a member belongs to a set."),
		spec("hset", -4, wd|flagFast, aclHash, cmdHset, "hash", "Creates or modifies the value of fields in a hash (hashes live in memory only)."),
		spec("hget", 3, r|flagFast, aclHash, cmdHget, "hash", "Returns the value of a field in a hash."),
		spec("hlen", 2, r|flagFast, aclHash, cmdCard(kindHash), "hash", "Returns the number of fields in a hash."),
		spec("hgetall", 2, r, aclHash, cmdHgetall, "hash", "Returns all fields and values in a hash."),
		spec("zadd", -4, wd|flagFast, aclSortedSet, cmdZadd, "sorted-set", "Adds members to a sorted set, or updates their scores (no options; sorted sets live in memory only)."),
		spec("zpopmin", -2, w|flagFast, aclSortedSet, cmdZpopmin, "sorted-set", "Returns the lowest-scoring members of a sorted set after removing them."),
		spec("zcard", 2, r|flagFast, aclSortedSet, cmdCard(kindZSet), "sorted-set", "Returns the number of members in a sorted set."),
		spec("zscore", 3, r|flagFast, aclSortedSet, cmdZscore, "sorted-set", "Returns the score of a member in a sorted set."),
	)
}
