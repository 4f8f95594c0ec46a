// Package cacheline holds what hot paths use to overlap their memory
// misses: Prefetch starts loading a line and returns at once, so that a
// loop that knows the lines it is about to touch (a pipelined batch's
// index buckets, a reaped batch's request slots) pays for their misses
// together instead of one after another. PrefetchAll does it for a list
// of addresses gathered first, for lines far apart in a big table, whose
// prefetches, issued one by one among other work, stalled it.
package cacheline

// Bytes is the cache line size the hot paths lay their data out for and
// step their prefetches by: 64 on every processor we run on.
const Bytes = 64
