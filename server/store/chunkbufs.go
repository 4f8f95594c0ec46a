package store

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// chunkBuffers hands out the sessions' slot buffers (one per chunk of 64
// slots, all of one size) cut from 2 MiB regions backed by transparent huge
// pages, and takes them back when a session closes.
//
// Why: a deep pipeline keeps thousands of reads in flight, each into its
// slot's own 2 KiB, so that the buffers a server reads into span tens of
// MiB. With 4 KiB pages nearly every completed read missed the TLB when the
// session decoded it, and in a virtual machine each of those misses walks
// two sets of page tables (see adviseHugePages).
//
// Invariants: a buffer is either handed out or in free, never both; the
// regions are unmapped only by release, after every session has closed.
// A buffer larger than a huge page gets a mapping of its own, kept in
// regions too so that release unmaps it.
type chunkBuffers struct {
	size int // bytes per buffer

	mu      sync.Mutex
	free    [][]byte
	regions [][]byte // mappings to unmap on release
}

// get returns a free buffer of c.size bytes, aligned to a page.
func (c *chunkBuffers) get() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b, nil
	}
	if c.size > hugePageBytes {
		b, err := mapAnon(c.size)
		if err != nil {
			return nil, err
		}
		c.regions = append(c.regions, b)
		return b, nil
	}
	region, err := hugeRegion()
	if err != nil {
		return nil, err
	}
	c.regions = append(c.regions, region)
	for at := c.size; at+c.size <= len(region); at += c.size {
		c.free = append(c.free, region[at:at+c.size:at+c.size])
	}
	return region[:c.size:c.size], nil
}

// put takes back a buffer get handed out; it must not be in flight.
func (c *chunkBuffers) put(b []byte) {
	c.mu.Lock()
	c.free = append(c.free, b)
	c.mu.Unlock()
}

// release unmaps every region; no buffer may be in use.
func (c *chunkBuffers) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.regions {
		_ = unix.MunmapPtr(unsafe.Pointer(&r[0]), uintptr(cap(r)))
	}
	c.regions, c.free = nil, nil
}

// hugeRegion maps one huge page's worth of memory on a huge page boundary
// and asks for it to be backed by one (an error there is ignored: the
// region then works with small pages). It maps twice that and unmaps the
// slack on either side.
func hugeRegion() ([]byte, error) {
	m, err := mapAnon(2 * hugePageBytes)
	if err != nil {
		return nil, err
	}
	p := unsafe.Pointer(&m[0])
	skip := (uintptr(p)+hugePageBytes-1)&^(hugePageBytes-1) - uintptr(p)
	if skip > 0 {
		_ = unix.MunmapPtr(p, skip)
	}
	if tail := hugePageBytes - skip; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(p, skip+hugePageBytes), tail)
	}
	region := m[skip : skip+hugePageBytes : skip+hugePageBytes]
	_ = unix.Madvise(region, unix.MADV_HUGEPAGE)
	return region, nil
}

// mapAnon maps n bytes of anonymous memory, outside the tracking of
// unix.Mmap, so that parts of it can be unmapped (unix.Munmap takes only
// whole mappings).
func mapAnon(n int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes: %w", n, err)
	}
	return unsafe.Slice((*byte)(p), n), nil
}
