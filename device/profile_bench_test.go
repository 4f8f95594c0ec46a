package device

import (
	"context"
	"io"
	"testing"
)

// BenchmarkLocalMemoryBench runs `tierbench device --backend localmemory
// --threads 2 --qd 64 --block 512` for one second per iteration, so that
// `go test -cpuprofile` shows where the per-request software cost goes. It
// reports the benchmark's IOPS and CPU µs per op as metrics.
func BenchmarkLocalMemoryBench(b *testing.B) {
	for _, inline := range []bool{false, true} {
		name := "handoff"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			cfg := BenchConfig{Backend: BackendLocalMemory, FileBytes: 1 << 30, Files: 1, BlockBytes: 512,
				Threads: 2, QueueDepth: 64, RuntimeSeconds: 1, InlineCompletion: inline}
			var iops, cpu float64
			for b.Loop() {
				res, err := Bench(context.Background(), cfg, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				iops, cpu = res.IOPS, res.CPUMicrosPerOp
			}
			b.ReportMetric(iops, "IOPS")
			b.ReportMetric(cpu, "cpu-µs/op")
		})
	}
}
