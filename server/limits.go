package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The knobs that keep one client from starving the server, which CONFIG
// SET may change while clients run (Redis's names and formats):
//
//   - timeout: a client idle for this many seconds is closed (0: never).
//     Idle is neither sending nor taking replies: a write to a client
//     that reads nothing for that long also closes it.
//   - client-output-buffer-limit: the replies the server holds for a
//     client and has not yet handed to the kernel. Over the hard limit the
//     client is closed at once; at or over the soft limit for soft-seconds
//     in a row, too. Only the normal class applies (tierbench has no
//     replicas and no pub/sub); the other two are kept for CONFIG GET.
//   - max-pending-read-bytes: tierbench's own: see Config.MaxPendingReadBytes.

// outputLimit is one class of client-output-buffer-limit; 0 disables a
// limit.
type outputLimit struct {
	hardBytes, softBytes int64
	softSeconds          int64
}

// outputLimits are the three classes in Redis's order.
type outputLimits [3]outputLimit

var outputClasses = [3]string{"normal", "slave", "pubsub"}

// DefaultClientOutputBufferLimit is the normal class's default. Redis's is
// "0 0 0" (no limit); tierbench closes a normal client whose unsent
// replies pass 256 MiB, or stay at 64 MiB or more for 60 s: Redis's own
// default for replicas, the class whose output it expects to be largest.
// Without one, a transaction of many big GETs, or a pipeline of big GETs
// sent by a client that does not read, holds the server's memory without
// bound. A single GET of a value over 256 MiB needs the limit raised.
const DefaultClientOutputBufferLimit = "normal 256mb 64mb 60"

// redisOutputDefaults are Redis's defaults for the slave and pubsub
// classes, which tierbench only shows.
var redisOutputDefaults = outputLimits{{}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}}

// liveConfig holds the values CONFIG SET changes; connections load them
// once per batch.
type liveConfig struct {
	timeoutSeconds   atomic.Int64
	output           atomic.Pointer[outputLimits]
	pendingReadBytes atomic.Int64
}

// parseOutputLimits applies a client-output-buffer-limit value ("class
// hard soft seconds", repeated) to base, as Redis's CONFIG SET does.
func parseOutputLimits(base outputLimits, v string) (outputLimits, error) {
	f := strings.Fields(v)
	if len(f) == 0 || len(f)%4 != 0 {
		return base, fmt.Errorf("Wrong number of arguments in buffer limit configuration.")
	}
	for i := 0; i < len(f); i += 4 {
		class := -1
		switch strings.ToLower(f[i]) {
		case "normal":
			class = 0
		case "slave", "replica":
			class = 1
		case "pubsub":
			class = 2
		}
		if class < 0 {
			return base, fmt.Errorf("Invalid client class specified in buffer limit configuration.")
		}
		hard, err1 := parseMemory(f[i+1])
		soft, err2 := parseMemory(f[i+2])
		secs, err3 := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 {
			return base, fmt.Errorf("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		base[class] = outputLimit{hardBytes: hard, softBytes: soft, softSeconds: secs}
	}
	return base, nil
}

// CheckClientOutputBufferLimit reports whether v is a valid
// client-output-buffer-limit value, for flag checking.
func CheckClientOutputBufferLimit(v string) error {
	if _, err := parseOutputLimits(redisOutputDefaults, v); err != nil {
		return fmt.Errorf("server: client-output-buffer-limit %q: %s", v, strings.TrimSuffix(err.Error(), "."))
	}
	return nil
}

// String is the CONFIG GET form, in bytes, as Redis shows it.
func (l outputLimits) String() string {
	var b strings.Builder
	for i, c := range l {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %d %d %d", outputClasses[i], c.hardBytes, c.softBytes, c.softSeconds)
	}
	return b.String()
}

// parseMemory parses a size as Redis's memtoull does: digits with an
// optional unit, k/m/g in thousands and kb/mb/gb in 1024s, any case.
func parseMemory(s string) (int64, error) {
	u := strings.ToLower(s)
	mul := int64(1)
	for _, unit := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if strings.HasSuffix(u, unit.suffix) {
			u, mul = strings.TrimSuffix(u, unit.suffix), unit.mul
			break
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mul {
		return 0, fmt.Errorf("server: memory size %q: want digits with an optional unit (k, kb, m, mb, g, gb)", s)
	}
	return n * mul, nil
}

// configSet answers CONFIG SET parameter value [parameter value ...]:
// every pair is checked before any is applied, as Redis does.
func (c *conn) configSet(args [][]byte) {
	if len(args) < 4 || len(args)%2 != 0 {
		c.wrongArity("config|set")
		return
	}
	live := &c.srv.live
	var apply []func()
	for i := 2; i < len(args); i += 2 {
		name, value := strings.ToLower(string(args[i])), string(args[i+1])
		failed := func(why string) {
			c.errorReply("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why)
		}
		switch name {
		case "timeout":
			n, ok := parseInt(args[i+1])
			if !ok || n < 0 || n > math.MaxInt32 {
				failed("argument couldn't be parsed into an integer")
				return
			}
			apply = append(apply, func() { live.timeoutSeconds.Store(n) })
		case "client-output-buffer-limit":
			l, err := parseOutputLimits(*live.output.Load(), value)
			if err != nil {
				failed(err.Error())
				return
			}
			apply = append(apply, func() { live.output.Store(&l) })
		case "max-pending-read-bytes":
			n, err := parseMemory(value)
			if err != nil || n < minPendingReadBytes {
				failed(fmt.Sprintf("argument must be a memory value of at least %d bytes", minPendingReadBytes))
				return
			}
			apply = append(apply, func() { live.pendingReadBytes.Store(n) })
		case "latency-tracking":
			on, ok := parseYesNo(value)
			if !ok {
				failed("argument must be 'yes' or 'no'")
				return
			}
			apply = append(apply, func() { c.srv.stages.off.Store(!on) })
		default:
			if c.isConfigParam(name) {
				failed("can't set immutable config")
			} else {
				c.errorReply("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			}
			return
		}
	}
	for _, fn := range apply {
		fn()
	}
	c.out = appendOK(c.out)
}

// isConfigParam reports whether CONFIG GET knows name.
func (c *conn) isConfigParam(name string) bool {
	for _, kv := range c.configValues() {
		if kv[0] == name {
			return true
		}
	}
	return false
}

// batchLimits are the live limits a connection applies to one batch.
type batchLimits struct {
	output      outputLimit
	timeout     time.Duration // 0: none
	pendingRead int64
}

func (s *Server) batchLimits() batchLimits {
	return batchLimits{
		output:      s.live.output.Load()[0],
		timeout:     time.Duration(s.live.timeoutSeconds.Load()) * time.Second,
		pendingRead: s.live.pendingReadBytes.Load(),
	}
}

// overOutputLimitWith reports whether a reply of n more bytes would take
// c's replies past the hard limit: GET checks before it copies a big
// value, so a client at the limit never costs the server the value too.
func (c *conn) overOutputLimitWith(n int) bool {
	hard := c.lim.output.hardBytes
	return hard > 0 && int64(c.spillBytes+len(c.out)+len(c.pend)+n) > hard
}

// overOutputLimit reports whether c's replies passed the hard limit: then
// they are dropped, from now on too, and c is marked to be closed, as
// Redis closes such a client without a reply.
func (c *conn) overOutputLimit() bool {
	if c.outDropped {
		c.out = c.out[:0]
		return true
	}
	if !c.overOutputLimitWith(0) {
		return false
	}
	c.dropOutput(0)
	return true
}

// dropOutput closes c for its output buffer: a reply of more bytes would
// take it past the hard limit.
func (c *conn) dropOutput(more int) {
	c.srv.log.Warn("client closed for overcoming of output buffer limits", "id", c.id, "addr", c.nc.RemoteAddr().String(),
		"bytes", c.spillBytes+len(c.out)+len(c.pend)+more, "hard_limit", c.lim.output.hardBytes)
	c.srv.stats.outputLimitClosed.Add(1)
	c.dropSpill()
	c.out, c.outDropped, c.closing = c.out[:0], true, true
}

// errOutputStalled: a write held soft-limit bytes for soft-seconds, or
// made no progress for timeout seconds.
var errOutputStalled = errors.New("server: client took no replies within its limits")

// write hands b to the kernel under the live limits: a write may wait for
// the client at most timeout (when set) without progress, and at most
// soft-seconds while soft-limit bytes or more wait. With neither limit in
// reach it sets no deadline, so the common write costs nothing extra.
func (c *conn) write(b []byte) (int, error) {
	out, timeout := c.lim.output, c.lim.timeout
	written := 0
	for {
		soft := out.softBytes > 0 && out.softSeconds > 0 && int64(len(b)) >= out.softBytes
		var deadline time.Time
		if soft || timeout > 0 {
			now := time.Now()
			if soft {
				deadline = now.Add(time.Duration(out.softSeconds) * time.Second)
			}
			if timeout > 0 && (deadline.IsZero() || now.Add(timeout).Before(deadline)) {
				deadline, soft = now.Add(timeout), false
			}
		}
		if !c.authed {
			// A client that has not authenticated and takes no
			// replies is closed at its authDeadline too.
			if bounded := c.boundUnauthenticated(deadline); !bounded.Equal(deadline) {
				deadline, soft = bounded, false
			}
		}
		if !deadline.IsZero() || c.writeDeadline {
			c.nc.SetWriteDeadline(deadline)
			c.writeDeadline = !deadline.IsZero()
		}
		n, err := c.nc.Write(b)
		written += n
		b = b[n:]
		if err == nil || !isTimeout(err) {
			return written, err
		}
		if !c.authed && !time.Now().Before(c.authDeadline) {
			c.srv.stats.authTimeoutClosed.Add(1)
			return written, errOutputStalled
		}
		// The soft deadline passed with soft-limit bytes still waiting
		// the whole time (they only shrink): close, as Redis does. An
		// idle deadline with no progress: close too.
		if soft && int64(len(b)) >= out.softBytes {
			c.srv.stats.outputLimitClosed.Add(1)
			return written, errOutputStalled
		}
		if !soft && n == 0 {
			return written, errOutputStalled
		}
	}
}

// isTimeout reports whether err is a deadline's. It is a function of its
// own so that the net.Error errors.As needs on the heap is made only when
// a write fails, not on every write.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
