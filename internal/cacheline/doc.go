// Package cacheline holds what hot paths use to overlap their memory
// misses: Prefetch starts loading a line and returns at once, so that a
// loop that knows the lines it is about to touch (a pipelined batch's
// index buckets, a reaped batch's request slots) pays for their misses
// together instead of one after another.
package cacheline
