// Package device is the block-device layer of tierbench: asynchronous,
// sector-aligned reads and writes on segment files opened with O_DIRECT,
// with libaio and io_uring backends issued as raw syscalls (no cgo), and a
// syscall-free localmemory backend that is the software ceiling.
//
// It knows nothing about the store or the RESP server above it.
//
// # Contract
//
// Open(Config) returns a Device. The device's linear address space is cut
// into segments of Config.SegmentBytes, each a file <Dir>/segment.<N>
// created by the first write that reaches it. Submit takes a batch of
// Requests; each accepted one gets exactly one call of Config.OnComplete,
// on one of the device's completion goroutines, with the bytes transferred
// or an error: ErrUnaligned (refused by Submit before the kernel sees it),
// ErrPastEnd (nothing was written there), ErrShortIO (part of it was), or
// the errno of the kernel wrapped with the op and offset.
//
// The exceptions: Poll (Poller, poll.go, every backend) delivers on its
// caller's goroutine what the kernel has completed and no completion
// goroutine has taken yet (localmemory: what waits for one), without
// waiting; the store's sessions call it before they wait for their reads,
// since on a busy process the reapers, woken through the netpoller, run
// late. And uring's SubmitIdle (IdleSubmitter, idle.go): a lone
// request on a device with nothing else in flight is waited for in the
// kernel by the submitter, as fio waits at queue depth 1, and its
// OnComplete runs on the submitter's goroutine before SubmitIdle returns.
// The store submits its sessions' lone reads that way, so a GET on an idle
// server costs one wake-up, not three (a completion's task_work waits for
// the submitting thread, then the doorbell for the reaper, then the
// hand-off for the session).
//
// # Design
//
// A table of ThrottleLimit slots holds the state of the requests in flight;
// a slot's index travels through the kernel as the iocb's aio_data or the
// SQE's user_data, so completing a request needs no map and no allocation.
// The lock-free stacks of free slot indexes (slotPool) are the throttle:
// Submit blocks on them while ThrottleLimit requests are in flight.
//
// libaio: IOContexts contexts (default CompletionThreads), each reaped by
// its own goroutine; every iocb carries IOCB_FLAG_RESFD, so the kernel
// rings the context's doorbell (an eventfd) as it completes; their depth is reduced, and Describe says so, when fs.aio-max-nr cannot
// hold IOContexts × ThrottleLimit events (AIOEventsNeeded is that figure,
// for preflight).
//
// uring: IOContexts rings (default max(CompletionThreads, min(2 × CPUs,
// 64))), each with a lock for its SQ side and a reaping goroutine, the
// ring's doorbell registered with IORING_REGISTER_EVENTFD. Submitters take the first free ring
// from a round-robin start, so concurrent submitters spread out instead of
// queueing behind one lock. No SQPOLL. Rings are set up with COOP_TASKRUN
// where the kernel has it (5.19+), so a completion is posted by the
// submitting thread at its next kernel entry instead of through an IPI;
// not SINGLE_ISSUER, which refuses submissions from a second thread
// (EEXIST). Each segment's file is entry n of a registered file table
// from its first request on. io_uring_enter is only made to
// submit (min_complete 0, never waiting) and as a raw syscall, so a long
// batch does not hand the caller's P to another thread (see enter). A
// caller may register a buffer (RegisterBuffer: one sparse table, the same
// index on every ring); a Request with Fixed set is then sent as
// READ_FIXED / WRITE_FIXED, whose pages the kernel pinned once. A buffer is
// unregistered before it is unmapped (uring_fixed.go).
//
// Before it delivers a reaped batch, a reaper starts loading the batch's
// slots and, through Config.Warm, what the caller keeps for each request,
// so that at thousands in flight the batch's cache misses overlap instead
// of stalling each completion in turn.
//
// A reaper takes what has completed without waiting (io_getevents with a
// zero timeout, or the CQ ring), and with nothing there waits on its
// doorbell in Go's netpoller, never in a blocking syscall: a goroutine in a
// syscall keeps its P until the runtime's monitor retakes it, up to 10-20
// ms, and the goroutines its completions readied wait that long when the
// other Ps are busy (docs/notes/2026-12-07-comment-figures.md has the
// measurement).
//
// Submissions made from inside OnComplete (the way a store resubmits, and
// the way the benchmark keeps its queue depth) are recognised by the thread
// id of the reaper that runs them: they go to that reaper's own context or
// ring and are sent by the reaper in one io_submit / io_uring_enter per
// group of reapSubmitEvery (32) completions and after the batch it is
// delivering, so a busy device costs one syscall per group, not per
// request, while no request waits for a whole batch as deep as the queue.
// Config.AfterGroup lets a caller that resubmits from completions gather
// a group's requests into one Submit (recognising the reaper costs a
// gettid per Submit).
//
// localmemory: segments are anonymous mappings; a batch takes its slots
// and is pushed whole, a compare-and-swap each and at most one wake-up,
// onto the lock-free queue of one of CompletionThreads goroutines: the
// submitter's, picked by the upper half of UserData, where callers keep
// their own id. The goroutine takes its queue whole and works through it
// in groups of memGroup: it prefetches a group's source lines, copies the
// group, returns its slots with one compare-and-swap, then delivers its
// completions; it parks when the queue is empty. Each queue has its own
// stack of free slots, so that a request crosses between CPUs only as the
// hand-off itself (see memQueue). With Config.InlineCompletion Submit
// copies and completes each request itself, on the caller's goroutine, so
// OnComplete must not call Submit; it prefetches in the same groups.
// Either way the memory misses of a group overlap instead of queueing one
// by one.
//
// # The benchmark
//
// Bench (tierbench device) prepares or reuses a file set stamped with a
// per-512-byte pattern derived from each unit's offset, then keeps Threads
// × QueueDepth random reads in flight for RuntimeSeconds and reports IOPS,
// MB/s, HdrHistogram latency and CPU per op, beside the real fio at the
// same shape with CompareFio, alternating the two over Passes. Each pass
// keeps the host's steal (/proc/stat) while each side ran, so that a pass
// the hypervisor did not leave alone is seen as the host's.
package device
