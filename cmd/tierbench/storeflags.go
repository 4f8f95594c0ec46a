package main

import (
	"flag"
	"fmt"
	"runtime"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/server/store"
)

// completionThreadsUsage is the help of --device-completion-threads, shared
// by tierbench device, kv and server.
var completionThreadsUsage = fmt.Sprintf("device completion goroutines (0: the reference's %d, capped at the CPUs this process may use, here %d: "+
	"one beyond the CPUs adds only hand-offs, since it can run only by taking a CPU from the submitters or another completion goroutine). "+
	"An explicit count is kept, the seed's 4 included: on localmemory each submitter's requests go to one goroutine, picked by the submitter, "+
	"and a goroutine with nothing to do parks until a submitter signals it, so those beyond the CPUs cost nothing while idle",
	device.DefaultCompletionThreads, device.CompletionThreadsFor(runtime.GOMAXPROCS(0)))

// bindStoreFlags registers the store flags shared by `tierbench server` and
// `tierbench kv`, named as Garnet names them. The returned function, called
// after fs.Parse, parses the sizes and returns the store's Config; its
// errors name the flag.
func bindStoreFlags(fs *flag.FlagSet) func() (store.Config, error) {
	memory := fs.String("memory", size.Format(store.DefaultMemoryBytes), "in-memory log size with --storage-tier (k, m, g suffixes); without it the log stays in memory and grows")
	page := fs.String("page", size.Format(store.DefaultPageBytes), "log page size, a power of two")
	segment := fs.String("segment", size.Format(store.DefaultSegmentBytes), "size of one segment file on the device, a power of two")
	index := fs.String("index", size.Format(store.DefaultIndexBytes), "hash index size: 64-byte buckets of 7 entries (about 9-15 bytes per key); 8g for 100 M keys")
	readCache := fs.String("readcache-memory", "0", "read cache for records read from the device (k, m, g suffixes; with --storage-tier); 0: off. See docs/read-cache.md")
	tier := fs.Bool("storage-tier", false, "keep only --memory of the log in memory and the rest on the device")
	logDir := fs.String("logdir", "", "directory for the segment files (needed with --storage-tier and the native device; must accept O_DIRECT)")
	devType := fs.String("device-type", store.DefaultDeviceType, "device under the log: native (O_DIRECT files) or localmemory (RAM, the software ceiling)")
	backend := fs.String("device-io-backend", store.DefaultBackend, "native device IO backend: libaio or uring")
	throttle := fs.Int("device-throttle-limit", 0, "max device requests in flight (0: the device default, 4096)")
	completion := fs.Int("device-completion-threads", 0, completionThreadsUsage)
	contexts := fs.Int("device-io-contexts", 0, "libaio contexts or io_uring rings (0: the device default)")
	inline := fs.Bool("device-inline-completion", false, "complete device reads on the goroutine that submits them, with no completion goroutine in between (localmemory; the native backends complete on their reapers either way)")
	sector := fs.Int("sector-size", 0, "device sector size in bytes (0: the logical block size of the disk under --logdir)")
	return func() (store.Config, error) {
		cfg := store.Config{
			StorageTier:       *tier,
			LogDir:            *logDir,
			DeviceType:        *devType,
			Backend:           *backend,
			ThrottleLimit:     *throttle,
			CompletionThreads: *completion,
			IOContexts:        *contexts,
			SectorSize:        *sector,
			InlineCompletion:  *inline,
		}
		for _, f := range []struct {
			name string
			in   string
			out  *int64
		}{
			{"memory", *memory, &cfg.MemoryBytes},
			{"page", *page, &cfg.PageBytes},
			{"segment", *segment, &cfg.SegmentBytes},
			{"index", *index, &cfg.IndexBytes},
		} {
			n, err := size.Parse(f.in)
			if err != nil {
				return cfg, fmt.Errorf("--%s: %w", f.name, err)
			}
			if n <= 0 {
				return cfg, fmt.Errorf("--%s %q: want a size above zero", f.name, f.in)
			}
			*f.out = n
		}
		n, err := size.Parse(*readCache)
		if err != nil {
			return cfg, fmt.Errorf("--readcache-memory: %w", err)
		}
		if n < 0 {
			return cfg, fmt.Errorf("--readcache-memory %q: want 0 (off) or a size", *readCache)
		}
		cfg.ReadCacheBytes = n
		return cfg, nil
	}
}
