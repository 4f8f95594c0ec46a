package kvbench

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

// BenchmarkLocalMemoryLadder runs `tierbench kv` untiered and tiered on
// localmemory (completion goroutines, and inline) at 2 threads, 2 M keys of
// 16 + 96 B, --memory 16m, so that `go test -cpuprofile` shows what the
// tiered path costs beyond the in-memory one. Each iteration loads the
// store and runs a one-second window; ops/s and CPU µs per op are reported.
func BenchmarkLocalMemoryLadder(b *testing.B) {
	for _, c := range []struct {
		name           string
		tiered, inline bool
	}{{"untiered", false, false}, {"tiered", true, false}, {"tiered-inline", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.DBSize, cfg.Threads, cfg.Runtime, cfg.JSON = 2_000_000, []int{2}, time.Second, true
			cfg.Store = store.Config{StorageTier: c.tiered, DeviceType: "localmemory", MemoryBytes: 16 << 20,
				IndexBytes: 64 << 20, InlineCompletion: c.inline}
			var last RunResult
			for b.Loop() {
				pr, pw := io.Pipe()
				done := make(chan Result, 1)
				go func() {
					var r Result
					json.NewDecoder(pr).Decode(&r)
					io.Copy(io.Discard, pr)
					done <- r
				}()
				if err := Run(context.Background(), cfg, pw, io.Discard); err != nil {
					b.Fatal(err)
				}
				pw.Close()
				r := <-done
				if len(r.Runs) != 1 || r.Runs[0].NotFound != 0 {
					b.Fatalf("runs %+v: want one run with every read found", r.Runs)
				}
				last = r.Runs[0]
			}
			b.ReportMetric(last.OpsPerSec, "ops/s")
			b.ReportMetric(last.CPUMicrosPerOp, "cpu-µs/op")
		})
	}
}
