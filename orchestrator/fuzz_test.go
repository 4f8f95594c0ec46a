package orchestrator

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
)

// Fuzz targets for every parser of bytes from outside: subcommand JSON,
// cells.jsonl, /proc files, cpulists, RESP replies and INFO text.

func addFiles(f *testing.F, names ...string) {
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join("testdata", n)); err == nil {
			f.Add(b)
		}
	}
}

func FuzzParseBench(f *testing.F) {
	addFiles(f, "bench-load.json", "bench-cell.json", "bench-warning.txt", "bench-error.txt", "bench-negative.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := rig.ParseBench(data)
		if err != nil {
			return
		}
		for _, c := range out.Cells {
			if c.Ops < 0 || c.Misses < 0 || c.Hits < 0 {
				t.Fatalf("accepted negative counts: %+v", c)
			}
		}
	})
}

func FuzzParseProcFiles(f *testing.F) {
	addFiles(f, "proc/4242/io", "proc/4242/status", "proc/4242/numa_maps")
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, err := rig.ParseProcIO(data); err == nil && v < 0 {
			t.Fatalf("negative read_bytes %d", v)
		}
		if pl, err := rig.ParseStatus(data); err == nil {
			if _, err := rig.ParseCPUList(pl.CPUs); err != nil {
				t.Fatalf("accepted a bad Cpus_allowed_list %q", pl.CPUs)
			}
		}
		_ = rig.ParseNumaMapsPolicy(data)
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3,8", "0-55,112-167", "", "3-1", "1,,2", "0-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		xs, err := rig.ParseCPUList(s)
		if err != nil || len(xs) == 0 {
			return
		}
		back, err := rig.ParseCPUList(rig.FormatCPUList(xs))
		if err != nil || len(back) != len(xs) {
			t.Fatalf("round trip of %q: %v, %v", s, back, err)
		}
	})
}

func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+PONG\r\n", ":42\r\n", "$5\r\nhello\r\n", "$-1\r\n", "-ERR no\r\n", "*2\r\n:1\r\n$1\r\nx\r\n", "$999999999\r\n", "*-1\r\n", "?\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = rig.ReadReply(bufio.NewReader(bytes.NewReader(data)))
	})
}

func FuzzParseInfo(f *testing.F) {
	f.Add("# Store\r\nLog.BeginAddress:64\r\nLog.HeadAddress:24576000\r\nLog.TailAddress:25600128\r\n")
	f.Add("Log.HeadAddress:9\nLog.TailAddress:5\n")
	f.Add("redis_version:7.0.15\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := rig.ParseLogAddresses(rig.ParseInfo(s))
		if err != nil {
			return
		}
		if share := a.DeviceShare(); share < 0 || share > 1 {
			t.Fatalf("device share %v out of [0, 1] for %+v", share, a)
		}
	})
}

func FuzzParseNSpid(f *testing.F) {
	f.Add([]byte("NSpid:\t4242\t1\n"))
	f.Add([]byte("Name:\tx\nNSpid:\t1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, n := range rig.ParseNSpid(data) {
			if n < 1 {
				t.Fatalf("accepted pid %d", n)
			}
		}
	})
}
