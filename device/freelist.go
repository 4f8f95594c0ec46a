package device

import (
	"sync"
	"sync/atomic"
	"time"
)

// slotPool is the set of free slot indexes, and so the throttle: one or
// more lock-free stacks threaded through one next array, with a blocking
// slow path for a submitter that finds them all empty.
//
// Why not a channel of indexes (what it replaced): a buffered channel takes
// its lock on every send and receive, and with completions released on one
// CPU and slots taken on the other the lock's spinning was a large part of
// the localmemory benchmark's CPU (runtime.lock2, unlock2 and procyield in
// a profile of tierbench device --backend localmemory). Here taking and
// returning a slot are one compare-and-swap each, and the mutex and
// condition variable are touched only while the throttle is full.
//
// Why several stacks: the localmemory device gives each completion queue
// its own, so that the slots a queue frees go back where its submitter
// takes them. With one stack for all, the stack's head was written by both
// CPUs for every request (a slot taken on one, freed on the other), and
// moving that cache line between the two CPUs of the test host cost more
// than the request's copy. A submitter takes from its own stack first and
// from the others only when its own is empty, so slots drift to the queues
// that use them; the throttle still counts them all.
type slotPool struct {
	stacks []freeStack
	next   []atomic.Uint32 // next[i]: index+1 of the entry below i in its stack (0: bottom)

	waiters atomic.Int32 // submitters blocked in popWait
	// closed makes popWait give up instead of waiting (see close): set
	// by a device whose Close takes every slot, so that a Submit that
	// finds none free after that learns the device is closed.
	closed atomic.Bool
	mu     sync.Mutex
	cond   sync.Cond
}

// freeStack is one stack of a slotPool, alone on its cache line.
//
// head packs a 32-bit version with top+1 (0: empty). The version changes
// on every successful swap, so a pop that read head, lost the processor
// while the same index was popped and pushed back under a different next,
// and then swaps, fails instead of installing a stale next (the ABA
// problem); it would take 2³² swaps in between to fool it.
type freeStack struct {
	head atomic.Uint64
	_    [56]byte
}

// newSlotPool makes a pool of slots 0..n-1 spread over k stacks in
// contiguous blocks, slot i on stack i*k/n: the slots, links and next
// words of one stack's requests then share no cache line with another's
// (interleaved, every write to a slot's state by one CPU took the line
// from the other).
func newSlotPool(n, k int) *slotPool {
	p := &slotPool{stacks: make([]freeStack, k), next: make([]atomic.Uint32, n)}
	p.cond.L = &p.mu
	for i := n - 1; i >= 0; i-- {
		p.stacks[i*k/n].push(p.next, uint32(i))
	}
	return p
}

// pop takes a free index from stack k, or from another stack when k is
// empty; ok is false when none is free.
func (p *slotPool) pop(k int) (idx uint32, ok bool) {
	if idx, ok = p.stacks[k].pop(p.next); ok {
		return idx, true
	}
	for j := 1; j < len(p.stacks); j++ {
		if idx, ok = p.stacks[(k+j)%len(p.stacks)].pop(p.next); ok {
			return idx, true
		}
	}
	return 0, false
}

// popUpTo takes up to len(dst) free indexes into dst with one swap, from
// stack k or, when k is empty, from the first other stack that is not, and
// returns how many it took.
func (p *slotPool) popUpTo(k int, dst []uint32) int {
	for j := range len(p.stacks) {
		if n := p.stacks[(k+j)%len(p.stacks)].popUpTo(p.next, dst); n > 0 {
			return n
		}
	}
	return 0
}

// popWait is pop that waits for a free index while none is free. ok is
// false only once the pool is closed and none is free.
func (p *slotPool) popWait(k int) (idx uint32, ok bool) {
	if idx, ok = p.pop(k); ok {
		return idx, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// waiters is raised before the pop that decides to wait, and push reads
	// it after its swap: either this pop sees the pushed index, or that push
	// sees a waiter and broadcasts, which it can only do once this
	// goroutine is inside Wait (it needs mu). close sets closed and
	// broadcasts under mu in the same way.
	p.waiters.Add(1)
	defer p.waiters.Add(-1)
	for {
		if idx, ok = p.pop(k); ok {
			return idx, true
		}
		if p.closed.Load() {
			return 0, false
		}
		p.cond.Wait()
	}
}

// close makes every popWait that finds no free index return instead of
// waiting, now and later.
func (p *slotPool) close() {
	p.mu.Lock()
	p.closed.Store(true)
	p.cond.Broadcast()
	p.mu.Unlock()
}

// takeAll takes all n indexes out of the pool, waiting for those in use to
// be pushed back. The caller has closed the pool first, so that no
// submitter waits for them instead.
func (p *slotPool) takeAll(n int) {
	for taken := 0; taken < n; {
		if _, ok := p.pop(0); ok {
			taken++
			continue
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// push returns index i to stack k and wakes blocked submitters, if any.
func (p *slotPool) push(k int, i uint32) {
	p.stacks[k].push(p.next, i)
	p.wakeWaiters()
}

// wakeWaiters wakes the submitters blocked in popWait, if any, after a
// push: popWait raises waiters before its last look (see there).
func (p *slotPool) wakeWaiters() {
	if p.waiters.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// pushAll returns the indexes idxs to stack k with one swap and wakes
// blocked submitters, if any.
func (p *slotPool) pushAll(k int, idxs []uint32) {
	if len(idxs) == 0 {
		return
	}
	p.stacks[k].pushAll(p.next, idxs)
	p.wakeWaiters()
}

func (s *freeStack) pushAll(next []atomic.Uint32, idxs []uint32) {
	for j := 1; j < len(idxs); j++ {
		next[idxs[j]].Store(idxs[j-1] + 1)
	}
	for {
		h := s.head.Load()
		next[idxs[0]].Store(uint32(h))
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(idxs[len(idxs)-1]+1)) {
			return
		}
	}
}

func (s *freeStack) pop(next []atomic.Uint32) (idx uint32, ok bool) {
	for {
		h := s.head.Load()
		top := uint32(h)
		if top == 0 {
			return 0, false
		}
		below := next[top-1].Load()
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(below)) {
			return top - 1, true
		}
	}
}

// popUpTo reads the top len(dst) entries at most, then swaps the head past
// them. A head unchanged since it was read, version included, means no
// index was pushed or popped in between, so the entries read were the
// stack's and their next words were not rewritten.
func (s *freeStack) popUpTo(next []atomic.Uint32, dst []uint32) int {
	for {
		h := s.head.Load()
		top, n := uint32(h), 0
		for ; top != 0 && n < len(dst); n++ {
			dst[n] = top - 1
			top = next[top-1].Load()
		}
		if n == 0 {
			return 0
		}
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(top)) {
			return n
		}
	}
}

func (s *freeStack) push(next []atomic.Uint32, i uint32) {
	for {
		h := s.head.Load()
		next[i].Store(uint32(h))
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(i+1)) {
			return
		}
	}
}
