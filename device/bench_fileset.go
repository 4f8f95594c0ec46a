package device

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"
)

// The benchmark's file set: each file stamped with a pattern that every
// block read can be checked against knowing only its offset, reused when
// it still verifies and rewritten through the device when it does not.

// prepare makes sure every file of the set holds the pattern: a file of the
// right size whose first and last blocks verify is reused; any other is
// rewritten through the device with O_DIRECT writes.
func (b *bench) prepare(ctx context.Context, progress io.Writer) error {
	cfg := b.cfg
	const chunkBytes = 1 << 20
	chunk := min(int64(chunkBytes), cfg.FileBytes)
	for chunk%int64(cfg.BlockBytes) != 0 || cfg.FileBytes%chunk != 0 {
		chunk -= int64(b.dev.SectorSize())
	}
	const depth = 8
	buf, err := AlignedBuffer(int(chunk) * depth)
	if err != nil {
		return err
	}
	defer FreeBuffer(buf)
	var todo []int
	for i := range cfg.Files {
		if cfg.Backend != BackendLocalMemory && b.fileVerifies(i, buf[:cfg.BlockBytes]) {
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		fmt.Fprintf(progress, "reusing the file set in %s (%d × %d bytes, pattern checked)\n", cfg.Dir, cfg.Files, cfg.FileBytes)
		return nil
	}
	if cfg.Backend != BackendLocalMemory {
		// A leftover file of another size would otherwise keep its old
		// length (O_DIRECT writes never shrink a file) and fail the reuse
		// check forever.
		for _, f := range todo {
			if err := truncateSegment(segmentPath(cfg.Dir, uint64(f))); err != nil {
				return fmt.Errorf("device bench: %w", err)
			}
		}
	}
	total := int64(len(todo)) * cfg.FileBytes
	fmt.Fprintf(progress, "preparing %d of %d files (%d MiB) with the verifiable pattern\n", len(todo), cfg.Files, total>>20)
	var written int64
	lastReport := time.Now()
	start := time.Now()
	// Completions arrive in any order, so a buffer is reused only once its
	// own write has completed.
	free := make([]int, 0, depth)
	for i := range depth {
		free = append(free, i)
	}
	wait := func() error {
		c := <-b.prepareDone
		free = append(free, c.buf)
		return c.err
	}
	drain := func() error {
		var first error
		for len(free) < depth {
			if err := wait(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, f := range todo {
		for off := int64(0); off < cfg.FileBytes; off += chunk {
			if err := ctx.Err(); err != nil {
				drain()
				return err
			}
			if len(free) == 0 {
				if err := wait(); err != nil {
					drain()
					return fmt.Errorf("device bench: prepare: %w", err)
				}
			}
			i := free[len(free)-1]
			free = free[:len(free)-1]
			p := buf[i*int(chunk) : (i+1)*int(chunk)]
			devOff := uint64(f)*uint64(cfg.FileBytes) + uint64(off)
			stampPattern(p, devOff)
			if _, err := b.dev.Submit([]Request{{Op: OpWrite, Offset: devOff, Buf: p, UserData: benchPrepareBit | uint64(i)}}); err != nil {
				free = append(free, i)
				drain()
				return fmt.Errorf("device bench: prepare: %w", err)
			}
			written += chunk
			if time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				fmt.Fprintf(progress, "  prepared %d of %d MiB (%.0f%%, %.0f MB/s)\n", written>>20, total>>20,
					100*float64(written)/float64(total), float64(written)/1e6/time.Since(start).Seconds())
			}
		}
	}
	if err := drain(); err != nil {
		return fmt.Errorf("device bench: prepare: %w", err)
	}
	fmt.Fprintf(progress, "  prepared %d MiB in %.1f s\n", total>>20, time.Since(start).Seconds())
	return nil
}

// fileVerifies reports whether file i has the right size and its first and
// last blocks hold the pattern.
func (b *bench) fileVerifies(i int, buf []byte) bool {
	st, err := os.Lstat(segmentPath(b.cfg.Dir, uint64(i)))
	if err != nil || !st.Mode().IsRegular() || st.Size() != b.cfg.FileBytes {
		return false
	}
	base := uint64(i) * uint64(b.cfg.FileBytes)
	for _, off := range []uint64{base, base + uint64(b.cfg.FileBytes) - uint64(len(buf))} {
		if _, err := b.dev.Submit([]Request{{Op: OpRead, Offset: off, Buf: buf, UserData: benchPrepareBit}}); err != nil {
			return false
		}
		if c := <-b.prepareDone; c.err != nil || !patternOK(buf, off) {
			return false
		}
	}
	return true
}

// The pattern: every 512-byte unit at device offset off holds 64 words
// patternBase(off)+j. A read of any aligned block is checked without knowing
// anything but its offset, and a block read from the wrong place, a stale
// buffer or zeros all fail.
func patternBase(off uint64) uint64 {
	z := off + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// stampPattern fills p, which sits at device offset off, with the pattern.
func stampPattern(p []byte, off uint64) {
	for u := 0; u+512 <= len(p); u += 512 {
		base := patternBase(off + uint64(u))
		for j := 0; j < 64; j++ {
			binary.LittleEndian.PutUint64(p[u+8*j:], base+uint64(j))
		}
	}
}

// patternOK reports whether p, read from device offset off, holds the
// pattern.
func patternOK(p []byte, off uint64) bool {
	for u := 0; u+512 <= len(p); u += 512 {
		base := patternBase(off + uint64(u))
		for j := 0; j < 64; j++ {
			if binary.LittleEndian.Uint64(p[u+8*j:]) != base+uint64(j) {
				return false
			}
		}
	}
	return true
}
