package server

import (
	"math/rand/v2"
	"strings"
)

// sortedSet orders members by score, then by member bytes: a map from
// member to score for ZSCORE and updates, and a skiplist for the order, so
// that adding a member costs O(log n) wherever it lands (a sorted slice
// made ZADD of members in descending order quadratic).
type sortedSet struct {
	score map[string]float64
	list  zskiplist
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
		z.list.remove(zEntry{old, member})
	}
	if z.score == nil {
		z.score = map[string]float64{}
	}
	z.score[member] = score
	z.list.insert(zEntry{score, member})
	return !exists
}

// len is the number of members.
func (z *sortedSet) len() int { return z.list.n }

// popMin removes and returns the member with the lowest score.
func (z *sortedSet) popMin() zEntry {
	e := z.list.popFront()
	delete(z.score, e.member)
	return e
}

// zskiplist is a skiplist of distinct entries in zLess order (Pugh's, with
// Redis's parameters: a node reaches each next level with probability 1/4,
// up to 32 levels). The zero value is an empty list.
type zskiplist struct {
	head  zNode // head.next[i]: the first node of level i
	level int   // levels in use
	n     int
}

const (
	zMaxLevel = 32
	zLevelP   = 4 // 1/zLevelP: the chance of one more level
)

// zNode is one entry and its forward links. Nine nodes in ten have at
// most two levels: their links live in the node itself (one allocation a
// member, which keeps the collector's work, and so other clients' tail
// latency, down while a big ZADD runs).
type zNode struct {
	e      zEntry
	next   []*zNode
	inline [2]*zNode
}

func zRandomLevel() int {
	l := 1
	for l < zMaxLevel && rand.Uint32()%zLevelP == 0 {
		l++
	}
	return l
}

// findPrev fills prev[i] with the last node of level i before e (the head
// when none), and returns the first node at or after e on level 0.
func (s *zskiplist) findPrev(e zEntry, prev *[zMaxLevel]*zNode) *zNode {
	if s.head.next == nil {
		s.head.next = make([]*zNode, zMaxLevel)
	}
	x := &s.head
	for i := s.level - 1; i >= 0; i-- {
		for x.next[i] != nil && zLess(x.next[i].e, e) < 0 {
			x = x.next[i]
		}
		prev[i] = x
	}
	return x.next[0]
}

// insert adds e, which must not be in the list.
func (s *zskiplist) insert(e zEntry) {
	var prev [zMaxLevel]*zNode
	s.findPrev(e, &prev)
	lvl := zRandomLevel()
	for i := s.level; i < lvl; i++ {
		prev[i] = &s.head
	}
	s.level = max(s.level, lvl)
	node := &zNode{e: e}
	if lvl <= len(node.inline) {
		node.next = node.inline[:lvl]
	} else {
		node.next = make([]*zNode, lvl)
	}
	for i := 0; i < lvl; i++ {
		node.next[i] = prev[i].next[i]
		prev[i].next[i] = node
	}
	s.n++
}

// remove deletes e; false when it is not in the list.
func (s *zskiplist) remove(e zEntry) bool {
	var prev [zMaxLevel]*zNode
	x := s.findPrev(e, &prev)
	if x == nil || zLess(x.e, e) != 0 {
		return false
	}
	for i := 0; i < len(x.next); i++ {
		prev[i].next[i] = x.next[i]
	}
	s.shrink()
	s.n--
	return true
}

// popFront removes and returns the first entry; the list must not be empty.
func (s *zskiplist) popFront() zEntry {
	x := s.head.next[0]
	for i := range x.next {
		s.head.next[i] = x.next[i]
	}
	s.shrink()
	s.n--
	return x.e
}

// shrink drops the empty top levels.
func (s *zskiplist) shrink() {
	for s.level > 0 && s.head.next[s.level-1] == nil {
		s.level--
	}
}
