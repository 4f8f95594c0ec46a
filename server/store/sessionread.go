package store

import (
	"fmt"

	"github.com/tierbench/tierbench/device"
)

// readSync reads the device window covering recBytes at addr and waits. It
// returns the window and the device offset it starts at.
func (s *Session) readSync(addr, recBytes uint64) (window []byte, start uint64, err error) {
	return s.readInto(&s.syncBuf, addr, recBytes)
}

// readInto is readSync into *buf, an aligned buffer it grows as needed.
func (s *Session) readInto(buf *[]byte, addr, recBytes uint64) (window []byte, start uint64, err error) {
	start, size := s.window(addr, recBytes)
	if uint64(len(*buf)) < size {
		device.FreeBuffer(*buf)
		*buf = nil
		b, err := device.AlignedBuffer(int(max(size, 4096)))
		if err != nil {
			return nil, 0, fmt.Errorf("store: allocate a %d B read buffer: %w", size, err)
		}
		*buf = b
	}
	w := (*buf)[:size]
	s.syncErr.Store(nil)
	s.syncReq[0] = device.Request{Op: device.OpRead, Offset: start, Buf: w, UserData: uint64(s.id)<<32 | syncSlot}
	s.st.pendingReads.Add(1)
	if _, err := s.st.dev.Submit(s.syncReq[:]); err != nil {
		s.st.pendingReads.Add(-1)
		return nil, 0, fmt.Errorf("store: submit a read of address %d: %w", addr, err)
	}
	<-s.syncDone
	s.st.pendingReads.Add(-1)
	s.st.completedReads.Add(1)
	if e := s.syncErr.Load(); e != nil {
		return nil, 0, fmt.Errorf("store: read the record at address %d: %w", addr, *e)
	}
	if n := s.syncN.Load(); n != int64(size) {
		return nil, 0, fmt.Errorf("store: read the record at address %d: got %d bytes, want %d: %w", addr, n, size, device.ErrShortIO)
	}
	return w, start, nil
}
