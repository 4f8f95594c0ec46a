package server

import (
	"sync"
	"sync/atomic"
)

// watchRegistry maps each WATCHed key to the connections watching it, so a
// write can mark their transactions dirty (EXEC then answers a null array).
//
// The cost to a write when nobody watches is one atomic load: touch reads
// the pair count before it takes the lock.
type watchRegistry struct {
	pairs atomic.Int64 // (key, connection) pairs registered
	mu    sync.Mutex
	keys  map[string][]*conn
}

// touch marks dirty every connection watching key.
func (w *watchRegistry) touch(key []byte) {
	if w.pairs.Load() == 0 {
		return
	}
	w.mu.Lock()
	for _, c := range w.keys[string(key)] {
		c.tx.dirty.Store(true)
	}
	w.mu.Unlock()
}

// watchedKeys returns every key some connection watches.
func (w *watchRegistry) watchedKeys() []string {
	if w.pairs.Load() == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.keys))
	for k := range w.keys {
		keys = append(keys, k)
	}
	return keys
}

// add registers c as a watcher of key, once.
func (w *watchRegistry) add(c *conn, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = make(map[string][]*conn)
	}
	for _, o := range w.keys[key] {
		if o == c {
			return false
		}
	}
	w.keys[key] = append(w.keys[key], c)
	w.pairs.Add(1)
	return true
}

// remove drops c from the watchers of keys.
func (w *watchRegistry) remove(c *conn, keys []string) {
	if len(keys) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		list := w.keys[k]
		for i, o := range list {
			if o == c {
				list[i] = list[len(list)-1]
				list = list[:len(list)-1]
				w.pairs.Add(-1)
				break
			}
		}
		if len(list) == 0 {
			delete(w.keys, k)
		} else {
			w.keys[k] = list
		}
	}
}

// keyChanged is what every command that writes a key calls once the write
// is done (SET, DEL of a live key, INCR, ...), and what expiry calls when
// it removes a key: transactions watching the key will abort.
func (c *conn) keyChanged(key []byte) { c.srv.watches.touch(key) }

// keysFlushed is keyChanged for FLUSHALL/FLUSHDB, called before the flush:
// as in Redis, only the watchers of keys that exist are marked, so WATCH
// of a missing key survives a flush. The caller has drained its pending
// reads (flagDrain), as exists requires.
func (c *conn) keysFlushed() error {
	for _, k := range c.srv.watches.watchedKeys() {
		ok, err := c.exists([]byte(k))
		if err != nil {
			return err
		}
		ok = ok || c.srv.colls.holds([]byte(k))
		if ok {
			c.srv.watches.touch([]byte(k))
		}
	}
	return nil
}

func cmdWatch(c *conn, args [][]byte) {
	if c.tx.active {
		c.errorReply("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, k := range args[1:] {
		key := string(k)
		if !c.srv.watches.add(c, key) {
			continue
		}
		var expireAt int64
		if !c.srv.colls.holds(k) {
			e, err := c.sess.Lookup(k)
			if err != nil {
				c.srv.watches.remove(c, []string{key})
				c.storeError(err)
				return
			}
			if e.Live {
				expireAt = e.ExpireAt
			}
		}
		c.tx.watched = append(c.tx.watched, key)
		c.tx.watchedExpiry = append(c.tx.watchedExpiry, expireAt)
	}
	c.out = appendOK(c.out)
}

// watchedExpired reports whether a key that was live with an expiry time
// when WATCHed has reached that time.
func (c *conn) watchedExpired() bool {
	now := int64(0)
	for _, at := range c.tx.watchedExpiry {
		if at == 0 {
			continue
		}
		if now == 0 {
			now = c.sess.Now()
		}
		if at <= now {
			return true
		}
	}
	return false
}

func cmdUnwatch(c *conn, _ [][]byte) {
	c.unwatchAll()
	c.out = appendOK(c.out)
}

// unwatchAll forgets every key c watches and clears the dirty mark.
func (c *conn) unwatchAll() {
	c.srv.watches.remove(c, c.tx.watched)
	c.tx.watched = c.tx.watched[:0]
	c.tx.watchedExpiry = c.tx.watchedExpiry[:0]
	c.tx.dirty.Store(false)
}
