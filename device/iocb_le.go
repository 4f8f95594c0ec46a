//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64

package device

// iocb is struct iocb of <linux/aio_abi.h>, 64 bytes. On a little-endian
// machine the kernel's PADDED(aio_key, aio_rw_flags) puts the key first.
type iocb struct {
	data      uint64 // aio_data: returned in io_event.data; we store the slot index
	key       uint32 // aio_key: written by the kernel
	rwFlags   uint32 // aio_rw_flags (RWF_*)
	opcode    uint16 // aio_lio_opcode
	reqprio   int16  // aio_reqprio
	fildes    uint32 // aio_fildes
	buf       uint64 // aio_buf: user address of the buffer
	nbytes    uint64 // aio_nbytes
	offset    int64  // aio_offset
	reserved2 uint64 // aio_reserved2
	flags     uint32 // aio_flags (IOCB_FLAG_RESFD …)
	resfd     uint32 // aio_resfd
}
