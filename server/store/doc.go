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
