package store

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/size"
)

// flushUserData tags the log's page writes; session reads carry their
// session id (≥ 1) in the top 32 bits instead.
const flushUserData = 0

// Store is a tiered key-value store. Its methods are safe for concurrent
// use; its Sessions are not.
type Store struct {
	cfg  Config
	seed maphash.Seed
	ix   *index
	log  *hlog
	rc   *readCache    // nil when Config.ReadCacheBytes is 0
	dev  device.Device // nil without a storage tier
	// idle is dev when it can complete a lone read on the submitter's
	// thread while nothing else is in flight (device.IdleSubmitter), for
	// a session's reads; nil otherwise.
	idle device.IdleSubmitter
	// poll is dev when a session about to wait for its reads can take
	// what the kernel has completed itself (device.Poller); nil otherwise.
	poll device.Poller
	// coldReads says the device's reads land out of every cache (the
	// native backends: the disk writes the buffer by DMA), so a session
	// prefetches each record before decoding it (noteRecord);
	// localmemory's are a copy a CPU just made.
	coldReads bool
	sector    uint64
	// chunkBufs holds the sessions' slot buffers (see chunkBuffers).
	chunkBufs chunkBuffers

	keys           atomic.Int64
	expiring       atomic.Int64 // the keys of keys whose newest record has an expiry time
	pendingReads   atomic.Int64
	completedReads atomic.Int64
	// The upserts' existence checks of every session, made and settled
	// (their effect on keys in) since Open: see SettleAll.
	checksMade    atomic.Int64
	checksSettled atomic.Int64

	// Expiry (see expiry.go): the clock's offset (tests move time with
	// it), the active sweep's schedule and its goroutine, and what it has
	// done.
	skewMillis  atomic.Int64
	sched       schedule
	sweepStop   chan struct{}
	sweepDone   chan struct{}
	sweepOnce   sync.Once
	expiredKeys atomic.Int64 // keys reclaimed because their time had passed
	sweepErrors atomic.Int64 // schedule entries the sweeper could not handle

	// sessions is copied on write so the device's completion goroutines
	// find a session by id with one atomic load: entry i is session id i.
	sessionsMu sync.Mutex
	sessions   atomic.Pointer[[]*Session]
	freeIDs    []uint32
	closed     atomic.Bool

	// flushDone carries the completion of the log's one page write in
	// flight; made before the device so its goroutines never see it change.
	flushDone chan error
}

// Stats is a snapshot of the store's counters.
type Stats struct {
	BeginAddress, HeadAddress, ReadOnlyAddress, TailAddress uint64
	// FlushedAddress is where the log's page writes to the device have
	// reached: everything below it is written, so its growth over a span
	// is the bytes the log wrote to the device in it (0 in memory).
	FlushedAddress uint64
	Keys           int64 // live keys: a counter, never a scan; see Session.Settle
	// ExpiringKeys is how many of Keys have an expiry time, exact as Keys
	// is (Redis's INFO keyspace "expires").
	ExpiringKeys                  int64
	IndexBuckets, OverflowBuckets int64
	PendingReads, CompletedReads  int64 // device reads in flight, and done
	// Expires is the active sweep's schedule: one entry per write with an
	// expiry whose deadline has not come (rewritten keys' entries included).
	Expires             int64
	ExpiredKeys         int64 // keys reclaimed because their time had passed
	SectorSize          int
	Backend, DeviceType string
	ReadCache           ReadCacheStats
}

// Open builds a store as cfg describes: the index, the in-memory log and,
// with a storage tier, the device under it.
func Open(cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, seed: maphash.MakeSeed(), sector: 512, flushDone: make(chan error, 1),
		sweepStop: make(chan struct{}), sweepDone: make(chan struct{})}
	s.sched.init()
	empty := make([]*Session, 1) // id 0 is the log's page writes
	s.sessions.Store(&empty)
	if cfg.StorageTier {
		dev, err := device.Open(device.Config{
			Backend:           cfg.deviceBackend(),
			Dir:               cfg.LogDir,
			SegmentBytes:      uint64(cfg.SegmentBytes),
			SectorSize:        cfg.SectorSize,
			ThrottleLimit:     cfg.ThrottleLimit,
			CompletionThreads: cfg.CompletionThreads,
			IOContexts:        cfg.IOContexts,
			InlineCompletion:  cfg.InlineCompletion,
			OnComplete:        s.onComplete,
			Warm:              s.warm,
		})
		if err != nil {
			return nil, fmt.Errorf("store: open the %s device: %w", cfg.deviceBackend(), err)
		}
		s.dev = dev
		s.idle, _ = dev.(device.IdleSubmitter)
		s.poll, _ = dev.(device.Poller)
		s.coldReads = cfg.deviceBackend() != device.BackendLocalMemory
		s.sector = uint64(dev.SectorSize())
		if s.sector == 0 || s.sector&(s.sector-1) != 0 || s.sector > uint64(cfg.PageBytes) {
			dev.Close()
			return nil, fmt.Errorf("store: device sector size %d does not divide --page %s", s.sector, size.Format(cfg.PageBytes))
		}
	}
	s.chunkBufs.size = slotsPerChunk * s.slotBytes()
	s.ix = newIndex(cfg.IndexBytes)
	s.log, err = newLog(cfg, s.dev, s.flushDone)
	if err != nil {
		if s.dev != nil {
			s.dev.Close()
		}
		return nil, err
	}
	if cfg.ReadCacheBytes != 0 {
		s.rc = newReadCache(cfg.ReadCacheBytes)
	}
	go s.sweeper()
	return s, nil
}

// onComplete receives every device completion. It runs on the device's
// completion goroutines: it only stores the result into the session slot
// named by userData and wakes the session, without allocating.
func (s *Store) onComplete(userData uint64, n int, err error) {
	if userData == flushUserData {
		s.flushDone <- err
		return
	}
	if sess := s.sessionOf(userData); sess != nil { // nil cannot happen: a session outlives its reads
		sess.completed(uint32(userData), n, err)
	}
}

// warm starts loading the fields of a read's slot that its completion
// writes (device.Config.Warm): at many reads in flight the slots have left
// the cache by the time they complete, and the completion's push, a locked
// instruction, would wait for each one's line in turn.
func (s *Store) warm(userData uint64) {
	if userData == flushUserData {
		return
	}
	if sess := s.sessionOf(userData); sess != nil {
		sess.warm(uint32(userData))
	}
}

// sessionOf is the session whose id is in userData's upper half, nil when
// there is none.
func (s *Store) sessionOf(userData uint64) *Session {
	sessions := *s.sessions.Load()
	if id := userData >> 32; id < uint64(len(sessions)) {
		return sessions[id]
	}
	return nil
}

// Close stops the flusher and closes the device. Every Session must be
// closed first. Nothing is made durable.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	s.stopSweeper()
	s.log.close()
	var err error
	if s.dev != nil {
		if cerr := s.dev.Close(); cerr != nil {
			err = fmt.Errorf("store: close the device: %w", cerr)
		}
	}
	s.log.free()
	s.chunkBufs.release()
	return err
}

// Stats returns the counters; it reads atomics only.
func (s *Store) Stats() Stats {
	st := Stats{
		BeginAddress:    s.log.begin.Load(),
		HeadAddress:     s.log.head.Load(),
		ReadOnlyAddress: s.log.readOnly.Load(),
		TailAddress:     s.log.tail.Load(),
		FlushedAddress:  s.log.flushed.Load(),
		Keys:            s.keys.Load(),
		ExpiringKeys:    s.expiring.Load(),
		IndexBuckets:    s.ix.bucketCount(),
		OverflowBuckets: int64(s.ix.overflowCount.Load()),
		PendingReads:    s.pendingReads.Load(),
		CompletedReads:  s.completedReads.Load(),
		Expires:         s.sched.entries.Load(),
		ExpiredKeys:     s.expiredKeys.Load(),
		SectorSize:      int(s.sector),
	}
	if s.rc != nil {
		st.ReadCache = s.rc.stats()
	}
	st.HeadAddress = max(st.HeadAddress, st.BeginAddress)
	st.ReadOnlyAddress = max(st.ReadOnlyAddress, st.HeadAddress)
	if s.cfg.StorageTier {
		st.DeviceType = s.cfg.DeviceType
		st.Backend = s.cfg.deviceBackend()
	} else {
		st.DeviceType = "none"
		st.Backend = "none"
	}
	return st
}

// Config returns the configuration in effect, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// FlushAll drops every key by moving BeginAddress to the tail: records
// below it no longer exist, and index entries pointing below it are free.
// It is instant whatever the index size. Writes that race with it land on
// either side of it; the key count is exact once they are done only if none
// raced.
func (s *Store) FlushAll() error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.log.allocMu.Lock()
	s.log.begin.Store(s.log.tail.Load())
	s.keys.Store(0)
	s.expiring.Store(0)
	s.log.allocMu.Unlock()
	s.sched.clear()
	if s.rc != nil {
		s.rc.clear()
	}
	return nil
}

func (s *Store) hash(key []byte) uint64 { return maphash.Bytes(s.seed, key) }

// NewSession returns a session for one goroutine.
func (s *Store) NewSession() *Session {
	sess := newSession(s)
	s.sessionsMu.Lock()
	defer s.sessionsMu.Unlock()
	old := *s.sessions.Load()
	var id uint32
	if n := len(s.freeIDs); n > 0 {
		id = s.freeIDs[n-1]
		s.freeIDs = s.freeIDs[:n-1]
	} else {
		id = uint32(len(old))
	}
	next := make([]*Session, max(len(old), int(id)+1))
	copy(next, old)
	sess.id = id
	next[id] = sess
	s.sessions.Store(&next)
	return sess
}

func (s *Store) dropSession(id uint32) {
	s.sessionsMu.Lock()
	defer s.sessionsMu.Unlock()
	old := *s.sessions.Load()
	next := make([]*Session, len(old))
	copy(next, old)
	next[id] = nil
	s.sessions.Store(&next)
	s.freeIDs = append(s.freeIDs, id)
}

var errCorrupt = errors.New("store: corrupt record")
