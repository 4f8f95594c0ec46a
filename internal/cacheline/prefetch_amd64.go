package cacheline

import "unsafe"

// Prefetch asks the processor to bring the cache line at p in, without
// waiting for it (PREFETCHT0): the misses of lines prefetched one after
// another overlap, where plain loads would each stall in turn. It never
// faults, whatever p is.
//
//go:noescape
func Prefetch(p unsafe.Pointer)
