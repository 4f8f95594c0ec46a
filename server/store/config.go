package store

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/tierbench/tierbench/internal/size"
)

// Config mirrors the Garnet server flags. Zero values pick the defaults
// below.
type Config struct {
	MemoryBytes  int64  // --memory: in-memory log size (tiered; ignored without a storage tier, where the log grows)
	PageBytes    int64  // --page: log page size, a power of two
	SegmentBytes int64  // --segment: device segment file size, a power of two multiple of PageBytes
	IndexBytes   int64  // --index: hash index size; IndexBytes/64 buckets, rounded down to a power of two
	StorageTier  bool   // --storage-tier: without it the store is purely in memory (the log never evicts; it grows)
	LogDir       string // --logdir: where the segment files go (native device)
	DeviceType   string // --device-type: "native" (default) | "localmemory"
	Backend      string // --device-io-backend: "libaio" (default) | "uring"
	// ReadCacheBytes (--readcache-memory) is the read cache's budget: copies
	// of records read from the device (see readCache); 0 turns it off.
	ReadCacheBytes int64

	// Passed to the device; 0 is the device's default.
	ThrottleLimit, CompletionThreads, IOContexts, SectorSize int
	// InlineCompletion (--device-inline-completion) passes
	// device.Config.InlineCompletion: on localmemory a session's reads are
	// copied and completed inside its CompletePending, on its goroutine.
	InlineCompletion bool
}

// Defaults of Config's zero values.
const (
	DefaultMemoryBytes  = 16 << 20
	DefaultPageBytes    = 4 << 20
	DefaultSegmentBytes = 1 << 30
	DefaultIndexBytes   = 128 << 20
	DefaultDeviceType   = "native"
	DefaultBackend      = "libaio"
)

// Limits on the sizes of a Config.
const (
	minPageBytes = 4096    // at least one sector of every disk we know
	maxPageBytes = 1 << 30 // keeps key and value lengths within 32 bits
	maxAddress   = 1<<48 - 1
	bucketBytes  = 64
)

// Errors of this package.
var (
	ErrTooLarge  = errors.New("store: record larger than a page")
	ErrClosed    = errors.New("store: closed")
	ErrLogFull   = errors.New("store: log address space exhausted")
	ErrIndexFull = errors.New("store: index overflow buckets exhausted; use a larger --index")
	ErrTooMany   = errors.New("store: too many pending reads in one session; call CompletePending")
	// ErrCanceled is delivered for a read dropped by CancelDeferred.
	ErrCanceled = errors.New("store: read canceled before it was issued")
)

// withDefaults fills the zero fields and checks the rest, naming the flag
// that is wrong.
func (c Config) withDefaults() (Config, error) {
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	if c.PageBytes == 0 {
		c.PageBytes = DefaultPageBytes
	}
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.IndexBytes == 0 {
		c.IndexBytes = DefaultIndexBytes
	}
	if c.DeviceType == "" {
		c.DeviceType = DefaultDeviceType
	}
	if c.Backend == "" {
		c.Backend = DefaultBackend
	}
	switch {
	case c.PageBytes < minPageBytes || c.PageBytes > maxPageBytes || bits.OnesCount64(uint64(c.PageBytes)) != 1:
		return c, fmt.Errorf("store: --page %s: want a power of two from %s to %s", size.Format(c.PageBytes), size.Format(minPageBytes), size.Format(maxPageBytes))
	case c.SegmentBytes < c.PageBytes || bits.OnesCount64(uint64(c.SegmentBytes)) != 1:
		return c, fmt.Errorf("store: --segment %s: want a power of two of at least --page %s", size.Format(c.SegmentBytes), size.Format(c.PageBytes))
	case c.IndexBytes < bucketBytes:
		return c, fmt.Errorf("store: --index %s: want at least %d bytes (one bucket)", size.Format(c.IndexBytes), bucketBytes)
	case c.IndexBytes/bucketBytes > 1<<40:
		return c, fmt.Errorf("store: --index %s: too large", size.Format(c.IndexBytes))
	case c.ThrottleLimit < 0 || c.CompletionThreads < 0 || c.IOContexts < 0 || c.SectorSize < 0:
		return c, fmt.Errorf("store: negative device setting (throttle %d, completion threads %d, io contexts %d, sector size %d)",
			c.ThrottleLimit, c.CompletionThreads, c.IOContexts, c.SectorSize)
	}
	// The device's names are checked even for an untiered store, which
	// does not use them: a misspelt one is a mistake either way.
	switch c.DeviceType {
	case "native", "localmemory":
	default:
		return c, fmt.Errorf("store: --device-type %q: want native or localmemory", c.DeviceType)
	}
	switch c.Backend {
	case "libaio", "uring":
	default:
		return c, fmt.Errorf("store: --device-io-backend %q: want libaio or uring", c.Backend)
	}
	if c.ReadCacheBytes != 0 {
		switch {
		case c.ReadCacheBytes < MinReadCacheBytes:
			return c, fmt.Errorf("store: --readcache-memory %s: want 0 (off) or at least %s", size.Format(c.ReadCacheBytes), size.Format(MinReadCacheBytes))
		case !c.StorageTier:
			return c, fmt.Errorf("store: --readcache-memory %s without --storage-tier: the cache holds records read from the device, and an in-memory store reads none; drop the flag or add --storage-tier", size.Format(c.ReadCacheBytes))
		}
	}
	if !c.StorageTier {
		return c, nil
	}
	if c.MemoryBytes < 2*c.PageBytes {
		return c, fmt.Errorf("store: --memory %s holds fewer than two --page %s pages; the tiered log needs at least two",
			size.Format(c.MemoryBytes), size.Format(c.PageBytes))
	}
	if c.DeviceType == "native" && c.LogDir == "" {
		return c, errors.New("store: --storage-tier with the native device needs --logdir (a directory on a disk that accepts O_DIRECT)")
	}
	return c, nil
}

// deviceBackend is the device backend name the Config asks for.
func (c Config) deviceBackend() string {
	if c.DeviceType == "localmemory" {
		return "localmemory"
	}
	return c.Backend
}

// Check returns the error Open would give for c's sizes and names, for a
// caller that plans servers before it starts them (tierbench run refuses
// a plan whose rows a server would refuse, by this same rule).
func (c Config) Check() error {
	_, err := c.withDefaults()
	return err
}
