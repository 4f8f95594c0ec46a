package device

import "errors"

// Op is the kind of IO a Request asks for.
type Op uint8

const (
	// OpRead reads len(Buf) bytes at Offset into Buf.
	OpRead Op = iota
	// OpWrite writes Buf at Offset.
	OpWrite
)

// Request is one asynchronous IO on the device's linear address space.
//
// Invariants, checked by Submit before anything reaches the kernel:
// Offset, len(Buf) and the address of &Buf[0] are multiples of SectorSize(),
// and the IO does not cross a segment boundary.
//
// Ownership: Buf belongs to the device from Submit until the completion for
// this request has been delivered; the caller must neither touch nor free it
// in between. Buffers from AlignedBuffer live outside the Go heap, so the
// address handed to the kernel stays valid and never moves.
type Request struct {
	Op Op
	// Fixed is what the device's RegisterBuffer returned for the buffer
	// Buf lies in, or 0. With it the uring backend reads and writes with
	// IORING_OP_READ_FIXED / WRITE_FIXED, whose pages the kernel pinned
	// once at registration; the other backends ignore it.
	Fixed  uint16
	Offset uint64 // byte address; segment = Offset / SegmentBytes
	Buf    []byte
	// UserData is returned untouched with the completion; callers use it to
	// find their own state without a map lookup or an allocation. Its upper
	// 32 bits name the submitter (a store session, a benchmark worker):
	// the localmemory device keeps each submitter's requests on one
	// completion goroutine (any value is correct; this one is cheap).
	UserData uint64
}

// CompletionFunc receives the outcome of one request: n bytes transferred,
// or a non-nil err (a short transfer is reported as ErrShortIO). It runs on
// one of the device's completion goroutines, so it must be quick and must not
// call Submit in a way that can wait on the throttle it is holding up.
type CompletionFunc func(userData uint64, n int, err error)

// Device is an asynchronous, sector-aligned block store over a set of segment
// files opened with O_DIRECT (or over RAM, for the localmemory backend).
type Device interface {
	// Submit queues reqs, batched into as few syscalls as the backend allows.
	// It blocks while ThrottleLimit requests are in flight. Every request it
	// accepts gets exactly one completion; on error, the requests from the
	// first refused one onward were not accepted and get no completion.
	Submit(reqs []Request) (accepted int, err error)
	// SectorSize is the alignment unit of offsets, lengths and buffers.
	SectorSize() int
	// InFlight is the number of requests submitted and not yet completed.
	InFlight() int
	// Close waits for in-flight requests, stops the completion goroutines and
	// closes the files. Submit after Close returns ErrClosed. A Submit that
	// runs while Close does either has its accepted requests completed
	// before Close returns or gets ErrClosed, as does one waiting for a
	// slot when Close begins.
	Close() error
}

// Errors returned by every backend.
var (
	ErrClosed    = errors.New("device: closed")
	ErrUnaligned = errors.New("device: unaligned offset, length or buffer")
	ErrShortIO   = errors.New("device: short read or write")
	ErrPastEnd   = errors.New("device: offset past the end of the segment")
)
