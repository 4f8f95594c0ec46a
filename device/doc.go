// Package device is the block-device layer of tierbench: asynchronous,
// sector-aligned reads and writes on segment files opened with O_DIRECT,
// with libaio and io_uring backends issued as raw syscalls (no cgo), and a
// syscall-free localmemory backend that is the software ceiling.
//
// It knows nothing about the store or the RESP server above it.
package device
