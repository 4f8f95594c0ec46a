package device

import (
	"sync"
	"sync/atomic"
)

// slotStack is the set of free slot indexes, and so the throttle: a
// lock-free stack threaded through next, with a blocking slow path for a
// submitter that finds it empty.
//
// Why not a channel of indexes (what it replaced): a buffered channel takes
// its lock on every send and receive, and with completions released on one
// CPU and slots taken on the other the lock's spinning was a third of the
// localmemory benchmark's CPU (profile of tierbench device --backend
// localmemory --threads 2 --qd 64: runtime.lock2, unlock2 and procyield
// 0.39 of 1.31 CPU µs per op). Here taking and returning a slot are one
// compare-and-swap each, and the mutex and condition variable are touched
// only while the throttle is full.
//
// head packs a 32-bit version with top+1 (0: empty). The version changes on
// every successful swap, so a pop that read head, lost the processor while
// the same index was popped and pushed back under a different next, and
// then swaps, fails instead of installing a stale next (the ABA problem);
// it would take 2³² swaps in between to fool it.
type slotStack struct {
	head atomic.Uint64
	next []atomic.Uint32 // next[i]: index+1 of the entry below i (0: bottom)

	waiters atomic.Int32 // submitters blocked in popWait
	mu      sync.Mutex
	cond    sync.Cond
}

func newSlotStack(n int) *slotStack {
	s := &slotStack{next: make([]atomic.Uint32, n)}
	s.cond.L = &s.mu
	for i := n - 1; i >= 0; i-- {
		s.push(uint32(i))
	}
	return s
}

// pop takes a free index; ok is false when none is free.
func (s *slotStack) pop() (idx uint32, ok bool) {
	for {
		h := s.head.Load()
		top := uint32(h)
		if top == 0 {
			return 0, false
		}
		below := s.next[top-1].Load()
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(below)) {
			return top - 1, true
		}
	}
}

// popWait takes a free index, waiting for one while none is free.
func (s *slotStack) popWait() uint32 {
	if idx, ok := s.pop(); ok {
		return idx
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// waiters is raised before the pop that decides to wait, and push reads
	// it after its swap: either this pop sees the pushed index, or that push
	// sees a waiter and broadcasts, which it can only do once this
	// goroutine is inside Wait (it needs mu).
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	for {
		if idx, ok := s.pop(); ok {
			return idx
		}
		s.cond.Wait()
	}
}

// push returns index i to the stack and wakes blocked submitters, if any.
func (s *slotStack) push(i uint32) {
	for {
		h := s.head.Load()
		s.next[i].Store(uint32(h))
		if s.head.CompareAndSwap(h, (h>>32+1)<<32|uint64(i+1)) {
			break
		}
	}
	if s.waiters.Load() > 0 {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}
