package server

import (
	"bytes"
	"errors"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// redisCompatVersion is the Redis version the server reports in INFO and
// HELLO: clients look at it to pick features, and tierbench answers the
// RESP2 subset of Redis 7.0 it implements.
const redisCompatVersion = "7.0.0"

func init() {
	// Commands Redis allows while loading and on a stale replica.
	const ls = flagLoading | flagStale
	registerCommands(
		&commandSpec{name: "ping", arity: -1, flags: flagFast, acl: aclConnection, run: cmdPing, group: "connection", summary: "Returns the server's liveliness response."},
		&commandSpec{name: "echo", arity: 2, flags: ls | flagFast, acl: aclConnection, run: cmdEcho, group: "connection", summary: "Returns the given string."},
		&commandSpec{name: "get", arity: 2, flags: flagReadonly | flagFast, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdGet, group: "string", summary: "Returns the string value of a key."},
		&commandSpec{name: "mget", arity: -2, flags: flagReadonly | flagFast, acl: aclString, firstKey: 1, lastKey: -1, keyStep: 1, run: cmdMget, group: "string", summary: "Atomically returns the string values of one or more keys."},
		&commandSpec{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM | flagDrain, acl: aclString, firstKey: 1, lastKey: -1, keyStep: 2, run: cmdMset, group: "string", summary: "Sets the string values of one or more keys."},
		&commandSpec{name: "del", arity: -2, flags: flagWrite | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: -1, keyStep: 1, run: cmdDel, group: "generic", summary: "Deletes one or more keys."},
		&commandSpec{name: "exists", arity: -2, flags: flagReadonly | flagFast | flagDrain, acl: aclKeyspace, firstKey: 1, lastKey: -1, keyStep: 1, run: cmdExists, group: "generic", summary: "Determines whether one or more keys exist."},
		&commandSpec{name: "incr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdIncr, group: "string", summary: "Increments the integer value of a key by one."},
		&commandSpec{name: "incrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdIncrBy, group: "string", summary: "Increments the integer value of a key by a number."},
		&commandSpec{name: "decr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdDecr, group: "string", summary: "Decrements the integer value of a key by one."},
		&commandSpec{name: "decrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast | flagDrain, acl: aclString, firstKey: 1, lastKey: 1, keyStep: 1, run: cmdDecrBy, group: "string", summary: "Decrements the integer value of a key by a number."},
		&commandSpec{name: "dbsize", arity: 1, flags: flagReadonly | flagFast, acl: aclKeyspace, run: cmdDBSize, group: "server", summary: "Returns the number of keys in the database."},
		&commandSpec{name: "flushall", arity: -1, flags: flagWrite | flagDrain, acl: aclKeyspace | aclDangerous, run: cmdFlushAll, group: "server", summary: "Removes all keys."},
		&commandSpec{name: "flushdb", arity: -1, flags: flagWrite | flagDrain, acl: aclKeyspace | aclDangerous, run: cmdFlushAll, group: "server", summary: "Removes all keys (there is one database)."},
		&commandSpec{name: "info", arity: -1, flags: ls, acl: aclDangerous, run: cmdInfo, group: "server", summary: "Returns information and statistics about the server."},
		&commandSpec{name: "config", arity: -2, run: cmdConfig, group: "server", summary: "CONFIG GET returns the effective values of configuration parameters."},
		&commandSpec{name: "command", arity: -1, flags: ls, acl: aclConnection, run: cmdCommand, group: "server", summary: "Returns detailed information about all commands."},
		&commandSpec{name: "client", arity: -2, run: cmdClient, group: "connection", summary: "CLIENT ID, SETNAME, GETNAME, INFO, LIST, SETINFO."},
		&commandSpec{name: "select", arity: 2, flags: ls | flagFast, acl: aclConnection, run: cmdSelect, group: "connection", summary: "Changes the selected database (only 0 exists)."},
		&commandSpec{name: "quit", arity: -1, flags: flagNoScript | ls | flagFast | flagNoAuth | flagAllowBusy | flagTxControl, acl: aclConnection, run: cmdQuit, group: "connection", summary: "Closes the connection."},
		&commandSpec{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | ls | flagNoMulti | flagAllowBusy | flagDrain, run: cmdShutdown, group: "server", summary: "Stops the server."},
		&commandSpec{name: "hello", arity: -1, flags: flagNoScript | ls | flagFast | flagNoAuth | flagAllowBusy, acl: aclConnection, run: cmdHello, group: "connection", summary: "Handshakes with the server (RESP2 only)."},
		&commandSpec{name: "auth", arity: -2, flags: flagNoScript | ls | flagFast | flagNoAuth | flagAllowBusy, acl: aclConnection, run: cmdAuth, group: "connection", summary: "Authenticates the connection."},
	)
}

// dispatch runs one request; args[0] is the command name. Checks follow
// Redis's order: unknown command, arity, authentication.
func (c *conn) dispatch(args [][]byte) {
	c.commands++
	cmd := lookupCommand(args[0])
	if cmd == nil {
		c.out = appendError(c.out, unknownCommand(args))
		c.txRefused()
		return
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity) {
		c.wrongArity(cmd.name)
		c.txRefused()
		return
	}
	if !c.authed && cmd.flags&flagNoAuth == 0 {
		c.out = appendError(c.out, "NOAUTH Authentication required.")
		c.txRefused()
		return
	}
	if c.srv.cluster != nil && cmd.firstKey > 0 && !c.clusterRoute(cmd, args) {
		c.txRefused()
		return
	}
	c.lastCmd = cmd
	if c.tx.active && cmd.flags&flagTxControl == 0 {
		c.queue(cmd, args)
		return
	}
	if cmd.flags&flagDrain != 0 {
		c.fillHoles()
	}
	cmd.run(c, args)
}

// unknownCommand words the error as Redis 7 does, quoting at most about
// 128 bytes of the arguments.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= 128 {
			break
		}
		s := truncate(a, 128-quoted)
		b.WriteByte('\'')
		b.Write(s)
		b.WriteString("' ")
		quoted += len(s) + 3
	}
	return b.String()
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func (c *conn) wrongArity(name string) {
	c.out = append(c.out, "-ERR wrong number of arguments for '"...)
	c.out = append(c.out, name...)
	c.out = append(c.out, "' command\r\n"...)
}

func (c *conn) errorReply(msg string) { c.out = appendError(c.out, msg) }

func (c *conn) storeError(err error) { c.out = appendStoreError(c.out, err) }

func cmdPing(c *conn, args [][]byte) {
	switch len(args) {
	case 1:
		c.out = append(c.out, "+PONG\r\n"...)
	case 2:
		c.out = appendBulk(c.out, args[1])
	default:
		c.wrongArity("ping")
	}
}

func cmdEcho(c *conn, args [][]byte) { c.out = appendBulk(c.out, args[1]) }

func cmdGet(c *conn, args [][]byte) {
	if c.srv.colls.n.Load() != 0 && c.srv.colls.holds(args[1]) {
		c.errorReply(errWrongType)
		return
	}
	c.get(args[1])
}

func cmdMget(c *conn, args [][]byte) {
	c.out = appendArray(c.out, len(args)-1)
	colls := c.srv.colls.n.Load() != 0
	for _, key := range args[1:] {
		if colls && c.srv.colls.holds(key) {
			c.out = appendNull(c.out) // MGET answers nil for other types
			continue
		}
		c.get(key)
		// A long MGET is written as it goes, so its reply never needs
		// more than MaxReplyBytes plus one value of memory.
		if !c.writeIfDue() {
			return
		}
	}
}

func cmdMset(c *conn, args [][]byte) {
	if len(args)%2 != 1 {
		c.wrongArity("mset")
		return
	}
	for i := 1; i < len(args); i += 2 {
		c.srv.colls.remove(args[i])
		if err := c.sess.Upsert(args[i], args[i+1]); err != nil {
			c.storeError(err)
			return
		}
		c.keyChanged(args[i])
	}
	c.out = appendOK(c.out)
}

func cmdDel(c *conn, args [][]byte) {
	var n int64
	for _, key := range args[1:] {
		existed, err := c.sess.Delete(key)
		if err != nil {
			c.storeError(err)
			return
		}
		existed = c.srv.colls.remove(key) || existed
		if existed {
			c.keyChanged(key)
			n++
		}
	}
	c.out = appendInt(c.out, n)
}

func cmdExists(c *conn, args [][]byte) {
	var n int64
	for _, key := range args[1:] {
		ok, err := c.exists(key)
		if err != nil {
			c.storeError(err)
			return
		}
		if ok || c.srv.colls.holds(key) {
			n++
		}
	}
	c.out = appendInt(c.out, n)
}

var errOverflow = errors.New("ERR increment or decrement would overflow")

func cmdIncr(c *conn, args [][]byte) { c.incrBy(args[1], 1) }
func cmdDecr(c *conn, args [][]byte) { c.incrBy(args[1], -1) }

func cmdIncrBy(c *conn, args [][]byte) {
	d, ok := parseInt(args[2])
	if !ok {
		c.errorReply(errNotInteger.Error())
		return
	}
	c.incrBy(args[1], d)
}

func cmdDecrBy(c *conn, args [][]byte) {
	d, ok := parseInt(args[2])
	if !ok || d == math.MinInt64 {
		// Redis refuses to negate the smallest int64 the same way.
		if ok {
			c.errorReply("ERR decrement would overflow")
		} else {
			c.errorReply(errNotInteger.Error())
		}
		return
	}
	c.incrBy(args[1], -d)
}

func (c *conn) incrBy(key []byte, delta int64) {
	if c.srv.colls.holds(key) {
		c.errorReply(errWrongType)
		return
	}
	c.incrDelta, c.incrErr = delta, nil
	v, err := c.sess.RMW(key, c.incrFn)
	switch {
	case c.incrErr != nil:
		c.errorReply(c.incrErr.Error())
	case err != nil:
		c.storeError(err)
	default:
		c.keyChanged(key)
		n, _ := parseInt(v)
		c.out = appendInt(c.out, n)
	}
}

// incr is the RMW function of INCRBY: c.incrDelta added to the stored
// integer (0 when the key does not exist). Its own refusals are kept in
// c.incrErr so they reach the client in Redis's words, not the store's.
func (c *conn) incr(old []byte, exists bool, dst []byte) ([]byte, error) {
	var v int64
	if exists {
		var ok bool
		if v, ok = parseInt(old); !ok {
			c.incrErr = errNotInteger
			return nil, errNotInteger
		}
	}
	d := c.incrDelta
	if (d > 0 && v > math.MaxInt64-d) || (d < 0 && v < math.MinInt64-d) {
		c.incrErr = errOverflow
		return nil, errOverflow
	}
	return strconv.AppendInt(dst[:0], v+d, 10), nil
}

// dbsizeReclaim bounds the keys DBSIZE reclaims before counting.
const dbsizeReclaim = 4096

// dbsizeSettleWait bounds DBSIZE's wait for other connections' existence
// checks (store.Session.SettleAll).
const dbsizeSettleWait = 250 * time.Millisecond

// cmdDBSize counts the live keys. It first reclaims (a bounded number of)
// the keys whose expiry time has passed and that the active sweep has not
// reached yet, so that a key is not counted after its time, and waits for
// the existence checks of writes already acknowledged, on any connection.
func cmdDBSize(c *conn, _ [][]byte) {
	if _, err := c.sess.ExpireDue(dbsizeReclaim); err != nil {
		c.storeError(err)
		return
	}
	c.sess.SettleAll(dbsizeSettleWait)
	c.out = appendInt(c.out, c.srv.keys())
}

func cmdFlushAll(c *conn, args [][]byte) {
	for _, a := range args[1:] {
		if !bytes.EqualFold(a, []byte("ASYNC")) && !bytes.EqualFold(a, []byte("SYNC")) {
			c.errorReply("ERR syntax error")
			return
		}
	}
	if err := c.keysFlushed(); err != nil {
		c.storeError(err)
		return
	}
	if err := c.srv.st.FlushAll(); err != nil {
		c.storeError(err)
		return
	}
	c.srv.colls.flush()
	c.out = appendOK(c.out)
}

func cmdSelect(c *conn, args [][]byte) {
	n, ok := parseInt(args[1])
	switch {
	case !ok:
		c.errorReply(errNotInteger.Error())
	case n != 0:
		c.errorReply("ERR DB index is out of range")
	default:
		c.out = appendOK(c.out)
	}
}

func cmdQuit(c *conn, _ [][]byte) {
	c.out = appendOK(c.out)
	c.closing, c.linger = true, true
}

func cmdShutdown(c *conn, args [][]byte) {
	for _, a := range args[1:] {
		switch strings.ToUpper(string(a)) {
		case "NOSAVE", "SAVE", "NOW", "FORCE":
		case "ABORT":
			c.errorReply("ERR No shutdown in progress.")
			return
		default:
			c.errorReply("ERR syntax error")
			return
		}
	}
	// Like Redis, a successful SHUTDOWN has no reply: the connection closes.
	c.srv.log.Info("SHUTDOWN received", "client_id", c.id, "addr", c.nc.RemoteAddr().String())
	c.srv.Shutdown()
	c.closing = true
}

func cmdHello(c *conn, args [][]byte) {
	if len(args) > 1 {
		ver, ok := parseInt(args[1])
		if !ok {
			c.errorReply("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver == 3 {
			c.errorReply("NOPROTO sorry, tierbench speaks RESP2 only: use HELLO 2 or no HELLO")
			return
		}
		if ver != 2 {
			c.errorReply("NOPROTO unsupported protocol version")
			return
		}
	}
	var name []byte
	var user *aclUser // set by AUTH
	for i := 2; i < len(args); i++ {
		switch {
		case bytes.EqualFold(args[i], []byte("AUTH")) && i+2 < len(args):
			if user = c.srv.users.check(args[i+1], args[i+2]); user == nil {
				c.errorReply(wrongPass)
				return
			}
			i += 2
		case bytes.EqualFold(args[i], []byte("SETNAME")) && i+1 < len(args):
			if !validClientName(args[i+1]) {
				c.errorReply(errClientName)
				return
			}
			name = args[i+1]
			i++
		default:
			c.errorReply("ERR Syntax error in HELLO option '" + string(truncate(args[i], 128)) + "'")
			return
		}
	}
	if !c.authed && user == nil {
		c.errorReply("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if user != nil {
		c.login(user)
	}
	if name != nil {
		c.setName(name)
	}
	c.out = appendArray(c.out, 14)
	c.out = appendBulkString(c.out, "server")
	c.out = appendBulkString(c.out, "redis")
	c.out = appendBulkString(c.out, "version")
	c.out = appendBulkString(c.out, redisCompatVersion)
	c.out = appendBulkString(c.out, "proto")
	c.out = appendInt(c.out, 2)
	c.out = appendBulkString(c.out, "id")
	c.out = appendInt(c.out, c.id)
	c.out = appendBulkString(c.out, "mode")
	c.out = appendBulkString(c.out, "standalone")
	c.out = appendBulkString(c.out, "role")
	c.out = appendBulkString(c.out, "master")
	c.out = appendBulkString(c.out, "modules")
	c.out = appendArray(c.out, 0)
}

const errClientName = "ERR Client names cannot contain spaces, newlines or special characters."

// validClientName applies Redis's rule: printable ASCII without spaces.
func validClientName(name []byte) bool {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// configValues answers CONFIG GET; a parameter is listed when redis-cli,
// redis-benchmark or a client library asks for it.
func (c *conn) configValues() [][2]string {
	cfg := c.srv.cfg
	values := [][2]string{
		{"appendonly", "no"},
		{"appendfsync", "no"},
		{"bind", cfg.Bind},
		{"client-output-buffer-limit", c.srv.live.output.Load().String()},
		{"client-query-buffer-limit", strconv.Itoa(cfg.MaxQueryBytes)},
		{"cluster-enabled", "no"},
		{"databases", "1"},
		{"dir", cfg.Store.LogDir},
		{"io-threads", "1"},
		{"latency-tracking", yesNo(!c.srv.stages.off.Load())},
		{"max-pending-read-bytes", strconv.FormatInt(c.srv.live.pendingReadBytes.Load(), 10)},
		{"maxclients", strconv.Itoa(cfg.MaxClients)},
		{"maxmemory", "0"},
		{"maxmemory-policy", "noeviction"},
		{"port", strconv.Itoa(c.srv.port())},
		{"proto-max-bulk-len", strconv.Itoa(maxBulkBytes)},
		{"save", ""},
		{"tcp-keepalive", "0"},
		{"timeout", strconv.FormatInt(c.srv.live.timeoutSeconds.Load(), 10)},
	}
	return append(values, c.srv.tlsConfigValues()...)
}

func cmdConfig(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	switch sub {
	case "get":
		if len(args) < 3 {
			c.wrongArity("config|get")
			return
		}
		values := c.configValues()
		var matched [][2]string
		for _, kv := range values {
			for _, p := range args[2:] {
				if ok, _ := path.Match(strings.ToLower(string(p)), kv[0]); ok {
					matched = append(matched, kv)
					break
				}
			}
		}
		c.out = appendArray(c.out, 2*len(matched))
		for _, kv := range matched {
			c.out = appendBulkString(c.out, kv[0])
			c.out = appendBulkString(c.out, kv[1])
		}
	case "set":
		c.configSet(args)
	case "resetstat":
		// Of the statistics, tierbench resets only what exists to be
		// watched between runs: the GET stage histograms.
		c.srv.stages.reset()
		c.out = appendOK(c.out)
	default:
		c.errorReply("ERR unknown subcommand '" + string(truncate(args[1], 128)) + "'. Try CONFIG HELP.")
	}
}
