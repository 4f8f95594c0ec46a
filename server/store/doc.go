// Package store is the tiered key-value store under the RESP server: a
// hybrid log in the style of FASTER/Tsavorite over the device layer.
//
// # Log
//
// Records live in one logical address space that only grows. The newest part
// of it is held in memory as a ring of MemoryBytes/PageBytes page frames,
// each allocated once with device.AlignedBuffer and reused; records are
// appended at TailAddress and never straddle a page. When the tail needs a
// frame that still holds an old page, that page (written to the device as
// soon as it was sealed) is evicted and HeadAddress advances past it.
// Addresses below HeadAddress are read from the device, whose offset is the
// logical address itself (the device maps Offset/SegmentBytes to a segment
// file). The log begins at BeginAddress (64), so address 0 means "none".
// Without a storage tier the log never evicts: pages are allocated as the
// tail needs them and everything stays in memory.
//
// # Records
//
// A record is a 16-byte header, the expiry word if it has one, the key, the
// value, padded to 8 bytes:
//
//	word 0: previous address in the hash chain (bits 0-47), written (bit 60),
//	        page filler (bit 61), expiry word follows (bit 62), tombstone (bit 63)
//	word 1: key length (bits 0-31), value length (bits 32-63)
//	[word 2: expiry time, Unix milliseconds]
//
// so a 16 B key with a 96 B value is a 128 B record, 136 B with a TTL.
// Records are immutable once published in the index: updates append,
// deletes append a tombstone, a TTL change appends the value again. Word 0
// is zeroed when the record's space is allocated and stored last, and the
// unused end of a page holds a filler word, so the log can be walked record
// by record (Scan). Expiry, its sweep and the scan are described in
// expiry.go and scan.go.
//
// # Index
//
// The hash index is a flat []uint64 of 64-byte buckets: seven entries and one
// word that links an overflow bucket (from a pointer-free pool) and carries
// the bucket's writer latch in its top bit. An entry packs the top 16 bits of
// the key's hash (the tag) with a 48-bit record address; keys of one bucket
// that share a tag share one entry and are told apart by following the
// records' previous addresses. Readers never take the latch: entries are
// loaded and stored atomically and a record is complete before its address is
// published. Writers of one bucket serialise on its latch, which makes the
// live-key counter exact.
//
// # Eviction safety
//
// Each in-memory frame has a state word holding the page number it holds, an
// evicting bit and a reader count. A reader copies out of a frame only after
// a compare-and-swap that increments the reader count while the state still
// names the page it wants; eviction moves the state to "evicting" only by a
// compare-and-swap from (that page, zero readers), and only after the page is
// on the device and HeadAddress has passed it. So a reader either holds the
// frame while it still contains its page, or sees that the page has gone and
// reads the record from the device instead; it can never see a torn or
// recycled frame.
//
// # Costs and limits
//
// The live-key count (DBSIZE) is a counter kept exact by the writers: a
// write whose key's index tag already has a chain must find out whether the
// key itself was live. Delete and RMW find out synchronously (their callers
// need the answer), which costs one device read when the chain's newest
// record is on the device. Upsert does not wait: it appends at once and
// submits that read as an existence check, which the device's completion
// goroutine settles as it lands (or, when the chain must be followed
// further, the session at its next call: any operation, CompletePending,
// Settle or Close); until then the counter may lag for a key that was new
// or deleted. A server submits its connection's checks before answering
// (SubmitChecks), and DBSIZE waits for those made before it on every
// session (SettleAll), so that a write acknowledged on one connection
// counts on another. Each write's effect on the counter depends only on the
// immutable chain below its own record, which keeps it exact under
// concurrent writers. Loading new keys costs no read. Records are never updated in place, so without a storage tier every
// write grows the log; FlushAll drops every key at once by moving
// BeginAddress, without reclaiming memory or segment files.
//
// # Read cache
//
// With Config.ReadCacheBytes (--readcache-memory) the store keeps copies of
// records it read from the device in a memory budget of their own (see
// readcache.go), so that a skewed workload's hot keys stop costing a device
// read each. A GET whose chain leaves memory asks the cache for the record
// at that address before it queues a device read; a device read that found
// its key offers the record to the cache.
//
// Tsavorite offers two ways and this store takes neither. Its read cache is
// a second in-memory log whose records the index points to (an address bit
// says which log), each chaining to the main log's record below it: a hit
// costs nothing extra, but every writer and every chain walk must know the
// second log, an update must invalidate the cached record and splice the
// chain, and eviction from the cache log's head must unlink each record
// from its hash chain, under the latches this store's writers use and its
// lock-free readers do not take. CopyReadsToTail appends the record read to
// the main log's tail instead: no new structure, but the copy takes the
// log's own memory (pushing out the records just written), is written to
// the device again when its page is flushed, and its eviction is the log's
// FIFO, which keeps no hot set that a scan cannot flush.
//
// This store keys the cache by the record's log address, which is never
// reused and whose bytes never change: the index and the chains stay as
// they are, a reader reaches a cached record only through the index, which
// names a key's newest record first, so no GET can answer an older value
// than the index holds, and nothing needs invalidating for correctness. A
// writer that replaces a key's record still drops its cached copy (it can
// never be read again) to free the space at once; FlushAll clears the
// cache; a cached record carries its expiry time and is judged by it as a
// record in memory is. The cache is pointer-free words: sets of 8 KiB
// behind a latch each, TinyLFU admission so a one-hit scan does not evict
// the hot set. Its cost when off is a nil check on the device path and in
// PrefetchKey, and a length check in Prefetch.
//
// # Sessions
//
// A Session belongs to one goroutine. Reads of records below HeadAddress are
// queued; CompletePending submits every queued read of the session to the
// device in one batch and delivers the results as they complete. Each
// session owns its aligned read buffers and pending slots, so neither a
// memory hit nor a device round trip allocates. A session registers each
// slot buffer with a device that can pin it once (uring's registered
// buffers) and releases the registration before it frees the buffer.
package store
