package server

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkProcessBatch measures the RESP layer alone: parsing and
// answering a pipelined batch of 64 requests from an in-memory store,
// without the network. ns/op is per request. GET-TTL reads keys that have
// a TTL (each read compares the record's expiry with the clock) and SET-EX
// writes SET key value EX 3600: beside GET and SET they show what a TTL
// itself costs.
func BenchmarkProcessBatch(b *testing.B) {
	for _, op := range []string{"GET", "SET", "PING", "GET-TTL", "SET-EX"} {
		b.Run(op, func(b *testing.B) {
			s := startServer(b, Config{ScatterGatherGet: true})
			c := newConn(s, nil)
			b.Cleanup(c.sess.Close)
			const batchSize = 64
			var batch []byte
			for i := 0; i < batchSize; i++ {
				key := fmt.Sprintf("%016d", i)
				c.sess.Upsert([]byte(key), make([]byte, 96))
				switch op {
				case "GET-TTL":
					c.sess.UpsertExpire([]byte(key), make([]byte, 96), time.Now().Add(time.Hour).UnixMilli())
					batch = append(batch, encodeArgs("GET", key)...)
				case "SET-EX":
					batch = append(batch, encodeArgs("SET", key, string(make([]byte, 96)), "EX", "3600")...)
				case "GET":
					batch = append(batch, encodeArgs("GET", key)...)
				case "SET":
					batch = append(batch, encodeArgs("SET", key, string(make([]byte, 96)))...)
				default:
					batch = append(batch, encodeArgs("PING")...)
				}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(batch) / batchSize))
			b.ResetTimer()
			for i := 0; i < b.N; i += batchSize {
				c.r, c.w = 0, copy(c.rbuf, batch)
				c.process()
				c.fillHoles()
				c.out = c.out[:0]
			}
		})
	}
}

// BenchmarkDeviceGet measures a pipelined batch of 64 GETs of records that
// live only on a localmemory device, with the stage timing of INFO
// latencystats on (latency-tracking=yes: parse, lookup, the read's
// submission, its completion on the device's completion goroutine and the
// hand-off back) and off. ns/op is per GET; run it with -cpu 1 to have it
// count every goroutine's CPU.
func BenchmarkDeviceGet(b *testing.B) {
	for _, tracking := range []bool{true, false} {
		b.Run("latency-tracking="+yesNo(tracking), func(b *testing.B) { benchmarkDeviceGet(b, tracking) })
	}
}

func benchmarkDeviceGet(b *testing.B, tracking bool) {
	s := startServer(b, Config{ScatterGatherGet: true, Store: tieredStore(b, "localmemory", "")})
	s.stages.off.Store(!tracking)
	c := newConn(s, nil)
	b.Cleanup(c.sess.Close)
	const batchSize = 64
	const keys = 2000 // the first of them are on the device only (tieredStore)
	for i := range keys {
		if err := c.sess.Upsert([]byte(tieredKey(i)), []byte(tieredValue(i))); err != nil {
			b.Fatal(err)
		}
	}
	var batch []byte
	for i := range batchSize {
		batch = append(batch, encodeArgs("GET", tieredKey(i*7))...)
	}
	reads := s.Store().Stats().CompletedReads
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batchSize {
		c.r, c.w = 0, copy(c.rbuf, batch)
		c.stages.startBatch(s, c.id)
		c.process()
		c.fillHoles()
		c.stages.written(c.stages.replyReady())
		c.out = c.out[:0]
	}
	b.StopTimer()
	if got := s.Store().Stats().CompletedReads - reads; got < int64(b.N)/2 {
		b.Fatalf("%d device reads for %d GETs: the keys are not on the device", got, b.N)
	}
}
