// Package server is the tiered RESP server: it speaks RESP2 over TCP on top
// of the hybrid-log store in server/store.
//
// Each connection is served by one goroutine that owns a read buffer and a
// reply buffer, both reused for the connection's life. It reads what the
// client sent, parses every complete request in the buffer (RESP arrays of
// bulk strings, or inline command lines) into arguments that are sub-slices
// of the read buffer, runs each, and writes all the replies with one write
// before it reads again. Parsing and answering a request allocates nothing.
//
// A GET whose record is below the store's HeadAddress becomes a device
// read. With scatter-gather GETs (Config.ScatterGatherGet, --sg-get) the
// reads of one batch are issued together and waited for once: the reply of
// such a GET is a hole at its place in the reply buffer, filled when the
// reads complete, so replies stay in request order. Commands that write,
// or read synchronously, wait for the batch's pending reads first.
//
// Memory per connection is bounded: the read buffer grows only up to
// Config.MaxQueryBytes (a larger request is a protocol error), and only as
// a big request's bytes arrive, never to a declared bulk length before its
// bytes come; the replies are written whenever they reach
// Config.MaxReplyBytes, and nothing more is read until the buffered
// requests are answered, so a client that pipelines faster than it reads
// is held back by TCP. The device reads of one connection, with the
// replies they gathered, hold at most Config.MaxPendingReadBytes: the
// session defers reads past that budget (store.Session.SetReadBudget), and
// completed replies are written while later reads are still out.
// limits.go holds the knobs CONFIG SET changes while clients run (Redis's
// timeout and client-output-buffer-limit, and max-pending-read-bytes): a
// client whose unsent replies pass the hard limit is closed, as Redis
// closes it, and so is one that takes no replies for timeout seconds. A
// MULTI queue counts against client-query-buffer-limit, as in Redis 7.4.
// No silent client holds the server (handshake.go): a TLS handshake has
// its own deadline and becomes a client only once done, and with a
// password a connection not authenticated by Config.AuthTimeout is closed
// on its next read or write.
// EXEC's replies, sent once it ends as Redis sends them, gather in
// chunks of their own size (the spill, multi.go) while its device reads
// go within the read budget, so a transaction holds its replies up to the
// hard limit and no copies of them.
//
// Commands live in a table (table.go): each file registers its commands
// with registerCommands from its init, each spec carrying Redis's arity,
// flags, key positions and ACL categories, which COMMAND INFO reports and
// dispatch checks.
//
// Transactions (multi.go, watch.go): MULTI queues copies of the commands,
// EXEC runs them alone: every connection marks itself busy while it runs
// a batch (not around network writes), and EXEC closes a gate and waits
// for the others to be idle (execGate), so nothing interleaves with a
// transaction. WATCH marks a transaction dirty when a watched key changes.
// The contract for every command that writes: once a key's write is done,
// call c.keyChanged(key) (SET, MSET, DEL of a live key, INCR, an expiry
// that removes a key, ...); before dropping every key call
// c.keysFlushed(). With no key watched keyChanged costs one atomic load.
//
// Lists, sets, hashes and sorted sets (collections.go) live in memory only,
// beside the store's strings, enough for redis-benchmark's default tests;
// string commands answer WRONGTYPE for such keys, checking them only when
// any exist. The map of them is locked only to find a key; each collection
// has its own lock, and a sorted set is a skiplist (zset.go), so a long
// ZADD holds up no GET.
//
// INFO latencystats splits a GET's time in the server into stages (parse,
// index, submit, complete, wake, reply, total; stages.go), each an
// always-on histogram that costs a few clock readings (the time-stamp
// counter where the kernel keeps time with it, see loghist) and one atomic
// add per stage and no allocation. A batch's first 16 GETs are timed stage
// by stage, the rest of a deeper pipeline only in reply and total
// (stageTimedGets); CONFIG RESETSTAT empties them and CONFIG SET
// latency-tracking no turns them off.
//
// Errors are worded as Redis words them; a malformed request is answered
// with "-ERR Protocol error: ..." and the connection is closed.
package server
