package device

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Command codes of struct iocb's aio_lio_opcode (<linux/aio_abi.h>). They
// are explicit numbers, not iota: the kernel skips 4.
const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
)

// ioEvent is struct io_event of <linux/aio_abi.h>, 32 bytes.
type ioEvent struct {
	data uint64 // the iocb's aio_data
	obj  uint64 // the iocb's user address
	res  int64  // bytes transferred, or a negative errno
	res2 int64
}

// Compile-time checks of the kernel ABI sizes.
var (
	_ [64 - unsafe.Sizeof(iocb{})]struct{}
	_ [unsafe.Sizeof(iocb{}) - 64]struct{}
	_ [32 - unsafe.Sizeof(ioEvent{})]struct{}
	_ [unsafe.Sizeof(ioEvent{}) - 32]struct{}
)

const (
	// aioBatch is the most iocbs one io_submit call carries.
	aioBatch = 256
	// iocbFlagResfd (IOCB_FLAG_RESFD) has the kernel signal aio_resfd
	// as the request completes.
	iocbFlagResfd = 1
	// submitRetries bounds the retries of an io_submit or io_uring_enter
	// that fails with EAGAIN/EINTR/EBUSY before the error is surfaced.
	submitRetries = 2000
)

// aioContext is one kernel AIO context with its submission scratch space.
// The kernel copies each iocb during io_submit, so the scratch is reused as
// soon as the call returns; mu guards it.
type aioContext struct {
	id      uintptr // aio_context_t
	cbs     [aioBatch]iocb
	ptrs    [aioBatch]uintptr // io_submit takes an array of iocb pointers
	pending int               // cbs[:pending] are filled and not yet submitted (deferred)
	writes  bool              // a write is among cbs[:pending] (see ioSubmit)
	bell    *doorbell         // every iocb signals it on completion
	// posted is the reaper's doorbell condition (doorbell.waitUntil): the
	// completion ring holds an event, or the device is closing; nil when
	// the ring's header is not the one we know, and the reaper then
	// reads the doorbell (doorbell.wait).
	posted func(uintptr) bool

	queueState // lock, reaper identity and deferred count (see queueState)
}

// aioRingHeader is the head of the completion ring the kernel maps into
// the process at a context's id (struct aio_ring in fs/aio.c), which
// libaio also reads to skip io_getevents when nothing has completed. The
// kernel moves tail as events complete, io_getevents moves head.
type aioRingHeader struct {
	id, nr, head, tail, magic, compatFeatures, incompatFeatures, headerLength uint32
}

// aioRingMagic is AIO_RING_MAGIC, the header's magic on every kernel
// since 2.6.
const aioRingMagic = 0xa10a10a1

// watchRing sets c.posted from the ring mapped at c.id, if its header
// carries the magic we know.
func (c *aioContext) watchRing(stop *atomic.Bool) {
	// The context id is the ring's address: reinterpreted, not converted
	// from an integer, which vet rightly distrusts for Go memory; this
	// memory is the kernel's mapping and lives until io_destroy.
	ring := (*aioRingHeader)(*(*unsafe.Pointer)(unsafe.Pointer(&c.id)))
	if ring == nil || atomic.LoadUint32(&ring.magic) != aioRingMagic {
		return
	}
	c.posted = func(uintptr) bool {
		return atomic.LoadUint32(&ring.head) != atomic.LoadUint32(&ring.tail) || stop.Load()
	}
}

// aioDevice is the libaio backend: raw io_setup/io_submit/io_getevents/
// io_destroy, one reaping goroutine per context, waiting on its doorbell.
type aioDevice struct {
	*core
	files   *segmentFiles
	ctxs    []*aioContext
	depth   int    // events per context
	reduced string // why depth is below the throttle limit, if it is
	next    atomic.Uint32
	stop    atomic.Bool
	wg      sync.WaitGroup
}

var _ Device = (*aioDevice)(nil)

// AIOEventsNeeded is how much of the host-wide fs.aio-max-nr budget a device
// opened with cfg asks for: one context per IOContexts, each as deep as the
// throttle limit (defaults applied). Preflight compares it with
// fs.aio-max-nr − fs.aio-nr; Open reduces the depth to fit if it must.
func AIOEventsNeeded(cfg Config) int {
	throttle := cfg.ThrottleLimit
	if throttle <= 0 {
		throttle = DefaultThrottleLimit
	}
	ctxs := cfg.IOContexts
	if ctxs <= 0 {
		ctxs = DefaultIOContexts(BackendLibaio, cfg.CompletionThreads)
	}
	return ctxs * throttle
}

// readProcInt reads one integer from a /proc/sys file.
func readProcInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// aioUnavailable are io_setup's errnos that mean libaio is not available
// on this host (see ErrKernelRefused).
var aioUnavailable = []unix.Errno{unix.ENOSYS, unix.EPERM, unix.EAGAIN}

// aioSetupContextID is what the context id holds when io_setup is called.
// The kernel wants 0 and answers EINVAL otherwise; a test sets it to check
// that such an error surfaces as a plain error, not as ErrKernelRefused.
var aioSetupContextID uintptr

func openLibaio(cfg Config) (*aioDevice, error) {
	nctx := cfg.IOContexts
	depth := cfg.ThrottleLimit
	var reduced string
	maxNr, err1 := readProcInt("/proc/sys/fs/aio-max-nr")
	used, err2 := readProcInt("/proc/sys/fs/aio-nr")
	if err1 == nil && err2 == nil {
		if free := maxNr - used; nctx*depth > free {
			depth = free / nctx
			reduced = fmt.Sprintf("reduced from %d to fit fs.aio-max-nr %d with fs.aio-nr %d in use", cfg.ThrottleLimit, maxNr, used)
		}
	}
	d := &aioDevice{files: newSegmentFiles(cfg.Dir)}
	for len(d.ctxs) < nctx {
		if depth < 1 {
			d.destroyContexts()
			return nil, fmt.Errorf("%w: io_setup: no room in fs.aio-max-nr for %d contexts (%w)", ErrKernelRefused, nctx, unix.EAGAIN)
		}
		id := aioSetupContextID
		_, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&id)), 0)
		if e == unix.EAGAIN && depth > 1 {
			// Another process took some of the budget meanwhile: start
			// over with half the depth, so all contexts stay equal.
			d.destroyContexts()
			depth /= 2
			reduced = fmt.Sprintf("reduced from %d: io_setup said EAGAIN (fs.aio-max-nr exhausted)", cfg.ThrottleLimit)
			continue
		}
		if e != 0 {
			d.destroyContexts()
			return nil, setupError(fmt.Sprintf("io_setup(%d)", depth), e, aioUnavailable...)
		}
		bell, err := newDoorbell()
		if err != nil {
			unix.Syscall(unix.SYS_IO_DESTROY, id, 0, 0)
			d.destroyContexts()
			return nil, err
		}
		d.ctxs = append(d.ctxs, &aioContext{id: id, bell: bell})
	}
	d.depth = depth
	d.reduced = reduced
	// A context can hold depth requests and any context may be handed all
	// of them, so the throttle never exceeds the depth: io_submit then never
	// runs out of room.
	d.core = newCore(cfg, min(cfg.ThrottleLimit, depth), 1)
	if err := d.files.openExisting(); err != nil {
		d.destroyContexts()
		return nil, err
	}
	for _, c := range d.ctxs {
		c.watchRing(&d.stop)
		d.wg.Add(1)
		go d.reap(c)
	}
	return d, nil
}

func (d *aioDevice) destroyContexts() {
	for _, c := range d.ctxs {
		unix.Syscall(unix.SYS_IO_DESTROY, c.id, 0, 0)
		c.bell.close()
	}
	d.ctxs = d.ctxs[:0]
}

func (d *aioDevice) dir() string { return d.files.dir }

// Describe reports the contexts and depth the device really got.
func (d *aioDevice) Describe() string {
	s := fmt.Sprintf("libaio: %d contexts × depth %d, %d reaping goroutines, throttle %d, sector %d B",
		len(d.ctxs), d.depth, len(d.ctxs), len(d.slots), d.sector)
	if d.reduced != "" {
		s += " (depth " + d.reduced + ")"
	}
	return s
}

// Submit implements Device: requests are spread over the contexts, one
// io_submit per batch of up to aioBatch; none when called from a completion
// function, whose submissions the reaper sends (see queueState).
func (d *aioDevice) Submit(reqs []Request) (int, error) {
	if !d.enter() {
		return 0, ErrClosed
	}
	defer d.leave()
	return submitOnQueues(d.core, d.ctxs, &d.next, reqs, d.submitBatch)
}

// submitBatch fills iocbs for a prefix of reqs after the deferred ones and,
// unless deferred is set and there is room left, submits them all. first is
// a slot already acquired for reqs[0], which has passed check; it is used or
// released. The caller holds c.mu.
func (d *aioDevice) submitBatch(c *aioContext, reqs []Request, deferred bool, first uint32) (int, error) {
	if c.pending == aioBatch {
		if _, err := d.flush(c, aioBatch); err != nil {
			d.release(first)
			return 0, err
		}
	}
	k0 := c.pending
	k := k0
	var err error
	for i := range reqs {
		if k == aioBatch {
			deferred = false
			break
		}
		idx, fd, ok, cerr := d.claim(d.files, reqs, i, first)
		if !ok {
			err = cerr
			break
		}
		r := &reqs[i]
		cb := &c.cbs[k]
		*cb = iocb{
			data:   uint64(idx),
			opcode: iocbCmdPread,
			fildes: uint32(fd),
			buf:    uint64(uintptr(unsafe.Pointer(&r.Buf[0]))),
			nbytes: uint64(len(r.Buf)),
			offset: int64(r.Offset % d.cfg.SegmentBytes),
			flags:  iocbFlagResfd,
			resfd:  uint32(c.bell.fd),
		}
		if r.Op == OpWrite {
			cb.opcode = iocbCmdPwrite
			c.writes = true
		}
		c.ptrs[k] = uintptr(unsafe.Pointer(cb))
		k++
	}
	c.pending = k
	if deferred && err == nil {
		d.deferredBatches.Add(1)
		c.deferredN += k - k0
		return k - k0, nil
	}
	queued, serr := d.flush(c, k0)
	if serr != nil {
		return queued, serr
	}
	return queued, err
}

// flush submits cbs[:pending] with as many io_submit calls as the kernel
// needs (it may take fewer than offered; EAGAIN and EINTR are retried a
// bounded number of times). On a fatal error the iocbs from the refused one
// on were never queued: those from mine on belong to the caller's Submit,
// whose slots are freed (flush returns how many of the caller's were
// queued); earlier ones were deferred
// submissions already accepted, which get their completion with the error
// from a new goroutine (the caller holds c.mu, which a completion function
// may need). The caller holds c.mu.
func (d *aioDevice) flush(c *aioContext, mine int) (int, error) {
	k := c.pending
	done, retries := 0, 0
	for done < k {
		n, e := c.ioSubmit(c.ptrs[done:k])
		switch {
		case e == 0:
			done += n
			retries = 0
			continue
		case (e == unix.EAGAIN || e == unix.EINTR) && retries < submitRetries:
			retries++
			if retries > 10 {
				time.Sleep(50 * time.Microsecond)
			} else {
				runtime.Gosched()
			}
			continue
		}
		cb := &c.cbs[done]
		err := fmt.Errorf("device: io_submit of a %d-byte read or write at file offset %d: %w", cb.nbytes, cb.offset, e)
		var orphans []uint32
		for i := done; i < k; i++ {
			if i < mine {
				orphans = append(orphans, uint32(c.cbs[i].data))
			} else {
				d.release(uint32(c.cbs[i].data))
			}
		}
		if len(orphans) > 0 {
			go func() {
				for _, idx := range orphans {
					d.complete(idx, -int64(e))
				}
			}()
		}
		c.pending, c.writes = 0, false
		return max(done-mine, 0), err
	}
	c.pending, c.writes = 0, false
	return k - mine, nil
}

// ioSubmit is io_submit of the iocbs at ptrs, returning how many the
// kernel took. A batch of reads is submitted without telling the Go
// scheduler (RawSyscall), as uring's enter is, and for the same reason:
// io_submit runs the block layer for every iocb, so a batch of 256 keeps
// the thread in the kernel for longer than the 20 µs after which the
// runtime's monitor hands its P to another thread, and the submitter then
// parks its own on return. On the pinned libaio server raw calls made far
// fewer context switches per GET and cost less CPU per GET at 8 and at 64
// connections, for as many GETs a second
// (docs/notes/2026-12-07-comment-figures.md has the figures). A read finds
// no block request free only while the disk's queue is full, and sleeping
// for one then holds the P harmlessly (see uringRing.enter). A batch with a
// write goes through the scheduler: an O_DIRECT write into blocks not yet
// allocated allocates them in io_submit, which can wait on the file
// system's journal for milliseconds, and the other goroutines should run
// meanwhile.
func (c *aioContext) ioSubmit(ptrs []uintptr) (int, unix.Errno) {
	var n uintptr
	var e unix.Errno
	if c.writes {
		n, _, e = unix.Syscall(unix.SYS_IO_SUBMIT, c.id, uintptr(len(ptrs)), uintptr(unsafe.Pointer(&ptrs[0])))
	} else {
		n, _, e = unix.RawSyscall(unix.SYS_IO_SUBMIT, c.id, uintptr(len(ptrs)), uintptr(unsafe.Pointer(&ptrs[0])))
	}
	return int(n), e
}

// reap is the completion goroutine of context c: it takes what completed
// without waiting, delivers it locked to its thread (see queueState), and
// when nothing has completed waits on the context's doorbell.
func (d *aioDevice) reap(c *aioContext) {
	defer d.wg.Done()
	var events [aioBatch]ioEvent
	for {
		n, e := c.take(events[:])
		if e != 0 && e != unix.EINTR {
			// Only a bug (EFAULT, EINVAL) gets here; do not spin.
			time.Sleep(time.Millisecond)
		}
		if n == 0 {
			if d.stop.Load() {
				return
			}
			var err error
			if c.posted != nil {
				err = c.bell.waitUntil(c.posted)
			} else {
				err = c.bell.wait()
			}
			if err != nil {
				time.Sleep(time.Millisecond) // only a bug gets here; do not spin
			}
			continue
		}
		d.warm(n, func(i int) (uint32, bool) { return uint32(events[i].data), true })
		limit := d.reapSubmitLimit()
		c.beginDelivery()
		group := 0
		for i := range n {
			d.complete(uint32(events[i].data), events[i].res)
			afterCompletion(d.core, c, &group, limit, d.sendDeferred)
		}
		d.afterGroup()
		d.sendDeferred(c)
		c.endDelivery()
	}
}

// take moves up to len(events) completed events of c into events
// without waiting (io_getevents with a zero timeout; the kernel hands each
// event to one caller only, so a poller may take them beside the reaper).
func (c *aioContext) take(events []ioEvent) (int, unix.Errno) {
	var now unix.Timespec
	n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, c.id, 0, uintptr(len(events)),
		uintptr(unsafe.Pointer(&events[0])), uintptr(unsafe.Pointer(&now)), 0)
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

// sendDeferred hands the kernel, in one io_submit, what completion
// functions submitted (see reapSubmitEvery). An error here has already been
// delivered to the requests it concerns. Only the reaper calls it.
func (d *aioDevice) sendDeferred(c *aioContext) {
	c.mu.Lock()
	if c.pending > 0 {
		d.noteDeferredRun(c.pending)
		d.flush(c, c.pending)
	}
	c.deferredN = 0
	c.mu.Unlock()
}

// Close implements Device.
func (d *aioDevice) Close() error {
	if !d.shut() {
		return ErrClosed
	}
	d.drain()
	d.stop.Store(true)
	var first error
	for _, c := range d.ctxs {
		if err := c.bell.ring(); err != nil && first == nil {
			first = err
		}
	}
	d.wg.Wait()
	d.destroyContexts()
	if err := d.files.closeAll(); err != nil && first == nil {
		first = err
	}
	return first
}
