package device

import "unsafe"

// The io_uring structures shared with the kernel, laid out as
// <linux/io_uring.h> lays them out; a size that differs fails the build.

// uringParams is struct io_uring_params, 120 bytes.
type uringParams struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFd         uint32
	resv         [3]uint32
	sqOff        uringSQOffsets
	cqOff        uringCQOffsets
}

// uringSQOffsets is struct io_sqring_offsets, 40 bytes.
type uringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// uringCQOffsets is struct io_cqring_offsets, 40 bytes.
type uringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// uringSQE is struct io_uring_sqe, 64 bytes.
type uringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

// uringCQE is struct io_uring_cqe, 16 bytes.
type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

var (
	_ [120 - unsafe.Sizeof(uringParams{})]struct{}
	_ [unsafe.Sizeof(uringParams{}) - 120]struct{}
	_ [64 - unsafe.Sizeof(uringSQE{})]struct{}
	_ [unsafe.Sizeof(uringSQE{}) - 64]struct{}
	_ [16 - unsafe.Sizeof(uringCQE{})]struct{}
	_ [unsafe.Sizeof(uringCQE{}) - 16]struct{}
)
