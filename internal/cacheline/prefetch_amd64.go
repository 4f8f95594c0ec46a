package cacheline

import "unsafe"

// Prefetch asks the processor to bring the cache line at p in, without
// waiting for it (PREFETCHT0): the misses of lines prefetched one after
// another overlap, where plain loads would each stall in turn. It never
// faults, whatever p is.
//
//go:noescape
func Prefetch(p unsafe.Pointer)

// PrefetchAll starts loading the line at each of addrs, in a loop of a
// few instructions per line, and returns at once.
//
// Why a loop of its own: on the processor we measured (the 2-CPU AMD EPYC
// guest of the README) a prefetch issued among a GET's parsing and
// hashing stalled what came after it and the misses hardly overlapped: a
// bucket prefetched that way cost a good part of what a random read does,
// where prefetches issued back to back cost a small fraction of one
// (docs/notes/2026-12-07-comment-figures.md has the figures). Our
// reading, which the guest's lack of counters leaves unproven: a prefetch
// whose address misses the TLB holds up retirement until its page walk is
// done. The addresses are plain numbers: nothing keeps their memory
// alive, and a stale one costs a wasted line, never a fault.
//
//go:noescape
func PrefetchAll(addrs []uintptr)
