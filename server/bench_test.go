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
