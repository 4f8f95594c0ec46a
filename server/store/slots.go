package store

import (
	"fmt"

	"github.com/tierbench/tierbench/device"
)

// A session's pending-read slots: taken for a device read, filled by the
// device's completion, released once the result is delivered.

// slotBytes is the size of each slot's own read buffer: two sectors, at
// least 2 KiB, so a record of up to a sector always fits whatever its
// alignment.
func (s *Session) slotBytes() int { return int(max(2048, 2*s.st.sector)) }

func (s *Session) slot(i uint32) *pendingRead {
	return &s.chunks[i/slotsPerChunk].Load().slots[i%slotsPerChunk]
}

// takeSlot returns a free slot, growing the slot table by one chunk (one
// allocation per 64 slots, kept for the session's life) when none is free.
func (s *Session) takeSlot() (uint32, error) {
	if len(s.free) == 0 {
		if s.nChunks == maxSlotChunks {
			return 0, ErrTooMany
		}
		sb := s.slotBytes()
		buf, err := device.AlignedBuffer(slotsPerChunk * sb)
		if err != nil {
			return 0, fmt.Errorf("store: allocate read buffers: %w", err)
		}
		c := &slotChunk{buf: buf}
		for i := range c.slots {
			c.slots[i].own = buf[i*sb : (i+1)*sb : (i+1)*sb]
		}
		base := uint32(s.nChunks * slotsPerChunk)
		s.chunks[s.nChunks].Store(c)
		s.nChunks++
		for i := slotsPerChunk - 1; i >= 0; i-- {
			s.free = append(s.free, base+uint32(i))
		}
	}
	i := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.outstanding++
	return i, nil
}

func (s *Session) releaseSlot(i uint32) {
	pr := s.slot(i)
	if pr.big != nil {
		device.FreeBuffer(pr.big)
		pr.big = nil
	}
	pr.window = nil
	s.free = append(s.free, i)
	s.outstanding--
}

// completed runs on a device completion goroutine.
func (s *Session) completed(i uint32, n int, err error) {
	if i == syncSlot {
		if err != nil {
			e := new(error)
			*e = err
			s.syncErr.Store(e)
		}
		s.syncN.Store(int64(n))
		s.syncDone <- struct{}{}
		return
	}
	stack := &s.done
	if i&checkFlag != 0 {
		i &^= checkFlag
		stack = &s.checks
		if pr := s.slot(i); pr.armed.Load() != 0 && err == nil && n == len(pr.window) {
			pr.settled.Store(s.st.settleNow(pr))
		}
	}
	pr := s.slot(i)
	if err != nil {
		e := new(error)
		*e = err
		pr.err.Store(e)
	}
	pr.n.Store(int64(n))
	for {
		top := stack.Load()
		pr.next.Store(uint32(top))
		if stack.CompareAndSwap(top, uint64(i)+1) {
			break
		}
	}
	// The push above comes before this load, and waitNotify stores
	// waiting before it looks at the stacks: one of the two sees the
	// other, so a session never sleeps on a completion it missed.
	if s.waiting.Load() {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// window computes the sector-aligned device window [start, end) that covers
// recordBytes from addr, clipped to addr's page (records never straddle
// pages, and pages never straddle segments).
func (s *Session) window(addr, recBytes uint64) (start, size uint64) {
	sec := s.st.sector
	start = addr &^ (sec - 1)
	end := (addr + recBytes + sec - 1) &^ (sec - 1)
	l := s.st.log
	if pageEnd := (addr>>l.pageShift + 1) << l.pageShift; end > pageEnd {
		end = pageEnd
	}
	return start, end - start
}

// aim points slot pr at the record at addr, expecting recBytes.
func (s *Session) aim(pr *pendingRead, addr, recBytes uint64) error {
	start, size := s.window(addr, recBytes)
	if pr.big != nil {
		device.FreeBuffer(pr.big)
		pr.big = nil
	}
	if size <= uint64(len(pr.own)) {
		pr.window = pr.own[:size]
	} else {
		big, err := device.AlignedBuffer(int(size))
		if err != nil {
			return fmt.Errorf("store: allocate a %d B read buffer: %w", size, err)
		}
		pr.big = big
		pr.window = big
	}
	pr.addr = addr
	pr.start = start
	return nil
}
