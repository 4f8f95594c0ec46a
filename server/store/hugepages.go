package store

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageBytes is the x86-64 and arm64 transparent huge page size.
const hugePageBytes = 2 << 20

// adviseHugePages asks the kernel to back the whole 2 MiB pages inside words
// with transparent huge pages (MADV_HUGEPAGE; hosts default THP to
// "madvise", and Go's heap no longer asks for them itself). It must run
// before words is first written: the kernel then faults huge pages in
// directly.
//
// Why: every GET looks up one random 64-byte bucket of the index (8 GiB at
// the reference scale, 256 MiB at the quick one). With 4 KiB pages nearly
// every lookup also misses the TLB, and in a virtual machine a page walk
// goes through two sets of page tables: (*index).find was a large share of
// the server's CPU per device GET in a profile
// (docs/notes/2026-12-07-comment-figures.md has the figure). An error is
// ignored: without huge pages the index works as before.
func adviseHugePages(words []uint64) {
	if len(words)*8 < 2*hugePageBytes {
		return
	}
	start := uintptr(unsafe.Pointer(&words[0]))
	lo := (start + hugePageBytes - 1) &^ (hugePageBytes - 1)
	hi := (start + uintptr(len(words))*8) &^ (hugePageBytes - 1)
	if hi > lo {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&words[0]), lo-start)), hi-lo), unix.MADV_HUGEPAGE)
	}
}
