package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestExecIsolation: transactions increment two counters together while
// other clients read both with MGET and write a third key outside any
// transaction. No reader may ever see the counters apart, since no command
// runs between the queued commands of an EXEC.
func TestExecIsolation(t *testing.T) {
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			cfg := Config{ScatterGatherGet: true}
			if tiered {
				cfg.Store = tieredStore(t, "native", "uring")
			}
			s := startServer(t, cfg)
			const writers, txPerWriter, readers = 4, 300, 4
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errc := make(chan error, writers+readers+1)
			for w := 0; w < writers; w++ {
				c := dial(t, s)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < txPerWriter; i++ {
						c.send(append(append(append(encodeArgs("MULTI"), encodeArgs("INCR", "a")...), encodeArgs("INCR", "b")...), encodeArgs("EXEC")...))
						for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n"} {
							if got := c.reply(); got != want {
								errc <- fmt.Errorf("transaction: got %q, want %q", got, want)
								return
							}
						}
						if got := c.reply(); len(got) < 4 || got[:4] != "*2\r\n" {
							errc <- fmt.Errorf("EXEC: got %q, want a two-reply array", got)
							return
						}
					}
				}()
			}
			var readerWG sync.WaitGroup
			for r := 0; r < readers; r++ {
				c := dial(t, s)
				readerWG.Add(1)
				go func() {
					defer readerWG.Done()
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						c.send(append(encodeArgs("SET", "other"+strconv.Itoa(n%100), "x"), encodeArgs("MGET", "a", "b")...))
						c.reply()
						if got := c.reply(); !sameCounters(got) {
							errc <- fmt.Errorf("MGET a b between transactions: got %q, want both counters equal", got)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			readerWG.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			c := dial(t, s)
			want := array(bulk(strconv.Itoa(writers*txPerWriter)), bulk(strconv.Itoa(writers*txPerWriter)))
			if got := c.do("MGET", "a", "b"); got != want {
				t.Errorf("after %d transactions: MGET a b = %q, want %q", writers*txPerWriter, got, want)
			}
		})
	}
}

// sameCounters reports whether an MGET a b reply holds two equal values
// (or two nulls, before the first transaction).
func sameCounters(reply string) bool {
	if reply == array(null, null) {
		return true
	}
	parts := strings.Split(reply, "\r\n") // *2, $n, a, $n, b, ""
	return len(parts) == 6 && parts[0] == "*2" && parts[1][0] == '$' && parts[2] == parts[4] && parts[1] == parts[3]
}

// TestGoRedisTransactions: go-redis's TxPipeline runs as one transaction,
// and its optimistic-locking loop (Watch + TxPipelined) retries when a
// concurrent writer changes the watched key, ending with the right value.
func TestGoRedisTransactions(t *testing.T) {
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			cfg := Config{ScatterGatherGet: true}
			if tiered {
				cfg.Store = tieredStore(t, "native", "libaio")
			}
			s := startServer(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String(), PoolSize: 8})
			defer rdb.Close()

			pipe := rdb.TxPipeline()
			set := pipe.Set(ctx, "tx:a", "1", 0)
			incr := pipe.Incr(ctx, "tx:a")
			get := pipe.Get(ctx, "tx:a")
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("TxPipeline Exec: %v", err)
			}
			if set.Val() != "OK" || incr.Val() != 2 || get.Val() != "2" {
				t.Errorf("TxPipeline replies: SET %q, INCR %d, GET %q; want OK, 2, \"2\"", set.Val(), incr.Val(), get.Val())
			}
			// A command the server refuses while queuing fails the whole
			// transaction, and nothing of it is applied.
			pipe = rdb.TxPipeline()
			pipe.Set(ctx, "tx:b", "1", 0)
			pipe.Do(ctx, "NOSUCHCOMMAND")
			if _, err := pipe.Exec(ctx); err == nil {
				t.Errorf("TxPipeline with an unknown command: no error, want EXECABORT")
			}
			if n, err := rdb.Exists(ctx, "tx:b").Result(); err != nil || n != 0 {
				t.Errorf("after the aborted transaction EXISTS tx:b = %d, %v; want 0", n, err)
			}

			// Optimistic locking: workers add to a counter with
			// WATCH/GET/MULTI/SET/EXEC while a plain writer INCRs it.
			const workers, adds, plainIncrs = 4, 50, 200
			if err := rdb.Set(ctx, "tx:n", "0", 0).Err(); err != nil {
				t.Fatal(err)
			}
			var retries atomic.Int64
			var wg sync.WaitGroup
			errc := make(chan error, workers+1)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < adds; i++ {
						for {
							err := rdb.Watch(ctx, func(tx *redis.Tx) error {
								n, err := tx.Get(ctx, "tx:n").Int()
								if err != nil {
									return err
								}
								time.Sleep(100 * time.Microsecond) // widen the window for the writer
								_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
									p.Set(ctx, "tx:n", strconv.Itoa(n+10), 0)
									return nil
								})
								return err
							}, "tx:n")
							if errors.Is(err, redis.TxFailedErr) {
								retries.Add(1)
								continue
							}
							if err != nil {
								errc <- err
								return
							}
							break
						}
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < plainIncrs; i++ {
					if err := rdb.Incr(ctx, "tx:n").Err(); err != nil {
						errc <- err
						return
					}
				}
			}()
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			failed := retries.Load()
			if failed == 0 {
				t.Errorf("no transaction was retried: the concurrent writer never aborted an EXEC")
			}
			want := workers*adds*10 + plainIncrs
			if got, err := rdb.Get(ctx, "tx:n").Int(); err != nil || got != want {
				t.Errorf("counter after %d transactional adds of 10 and %d INCRs: got %d, %v; want %d", workers*adds, plainIncrs, got, err, want)
			}
			t.Logf("%d transactions retried after a concurrent write", failed)
		})
	}
}

// TestExecRepliesInOrder: a transaction whose replies pass MaxReplyBytes
// many times over, mixing device reads, memory hits, misses, MGETs, big
// values and writes, answers every command in its place (EXEC gathers its
// replies in chunks while reads complete in any order), in memory and
// tiered, with and without scatter-gather GETs.
func TestExecRepliesInOrder(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tiered bool
		sg     bool
	}{
		{"memory", false, true},
		{"tiered/sg-get=true", true, true},
		{"tiered/sg-get=false", true, false},
	} {
		for _, dev := range []string{"localmemory", "native"} {
			if !tt.tiered && dev == "native" {
				continue
			}
			t.Run(tt.name+"/"+dev, func(t *testing.T) {
				cfg := Config{MaxReplyBytes: 4 << 10, ScatterGatherGet: tt.sg}
				if tt.tiered {
					cfg.Store = tieredStore(t, dev, "libaio")
				}
				s := startServer(t, cfg)
				c := dial(t, s)
				if tt.tiered {
					loadTiered(t, s, c)
				} else {
					for i := 0; i < tieredKeys; i++ {
						if got := c.do("SET", tieredKey(i), tieredValue(i)); got != "+OK\r\n" {
							t.Fatalf("SET %s: got %q", tieredKey(i), got)
						}
					}
				}
				// Big values, on the device when tiered (the 128 KiB in
				// memory holds about 14 of them).
				big := strings.Repeat("b", 9000)
				const bigKeys = 100
				for i := 0; i < bigKeys; i++ {
					k := "big:" + strconv.Itoa(i)
					if got := c.do("SET", k, big+k); got != "+OK\r\n" {
						t.Fatalf("SET %s: got %q", k, got)
					}
				}
				req := encodeArgs("MULTI")
				var want []string
				queued := 0
				add := func(reply string, args ...string) {
					req = append(req, encodeArgs(args...)...)
					want = append(want, reply)
					queued++
				}
				for i := 0; i < tieredKeys; i += 3 {
					add(bulk(tieredValue(i)), "GET", tieredKey(i))
					switch i % 60 {
					case 0:
						add(array(bulk(tieredValue(i)), null, bulk(tieredValue(tieredKeys-1-i))), "MGET", tieredKey(i), "missing", tieredKey(tieredKeys-1-i))
					case 15:
						k := "new:" + strconv.Itoa(i)
						add("+OK\r\n", "SET", k, big+k)
						add(bulk(big+k), "GET", k)
					case 9, 21, 33, 45, 57:
						k := "big:" + strconv.Itoa(i%bigKeys)
						add(bulk(big+k), "GET", k)
					case 30:
						add(null, "GET", "missing:"+strconv.Itoa(i))
						add("+PONG\r\n", "PING")
					}
				}
				req = append(req, encodeArgs("EXEC")...)
				wantAll := "+OK\r\n" + strings.Repeat("+QUEUED\r\n", queued) + array(want...)
				go c.send(req)
				got := make([]byte, len(wantAll))
				if n, err := fullRead(c, got); err != nil {
					t.Fatalf("read replies: %v after %d of %d bytes", err, n, len(wantAll))
				}
				if string(got) != wantAll {
					at := firstDiff(string(got), wantAll)
					t.Fatalf("replies differ at byte %d of %d:\ngot  %.200q\nwant %.200q", at, len(wantAll), got[at:], wantAll[at:])
				}
				if got := c.do("PING"); got != "+PONG\r\n" {
					t.Errorf("PING after EXEC: got %q", got)
				}
			})
		}
	}
}
