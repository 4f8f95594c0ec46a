package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestKVFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--help"}, 0, "--device-io-backend"},
		{[]string{"--memory", "16x"}, 2, `--memory: size "16x"`},
		{[]string{"--index", "0"}, 2, `--index "0": want a size above zero`},
		{[]string{"--rumd", "50,50"}, 2, `--rumd "50,50"`},
		{[]string{"--rumd", "50,40,0,0"}, 2, "add up to 90"},
		{[]string{"-t", "1,x"}, 2, "-t:"},
		{[]string{"--dbsize", "1000", "--keylength", "2"}, 2, "--keylength 2"},
		{[]string{"--storage-tier", "--dbsize", "10", "--runtime", "0"}, 1, "--logdir"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"kv"}, tc.args...), &stdout, &stderr)
		// Asked-for help is on stdout, every error on stderr.
		if out := stdout.String() + stderr.String(); code != tc.wantCode || !strings.Contains(out, tc.wantErr) {
			t.Errorf("kv %q: got exit %d, output %q; want exit %d and %q", tc.args, code, out, tc.wantCode, tc.wantErr)
		}
	}
}

// TestKVRun runs the real benchmark on the localmemory device and reads
// its JSON document.
func TestKVRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"kv", "--storage-tier", "--device-type", "localmemory", "--memory", "256k", "--page", "64k",
		"--index", "1m", "--dbsize", "20000", "-t", "1,2", "--runtime", "1", "--verify", "--json"}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("kv: exit %d, stderr %s", code, stderr.String())
	}
	var res struct {
		Load struct {
			Keys      int64   `json:"keys"`
			Seconds   float64 `json:"seconds"`
			OpsPerSec float64 `json:"ops_per_sec"`
		} `json:"load"`
		Runs []struct {
			Threads     int     `json:"threads"`
			Seconds     float64 `json:"seconds"`
			Ops         int64   `json:"ops"`
			OpsPerSec   float64 `json:"ops_per_sec"`
			DeviceReads int64   `json:"device_reads"`
		} `json:"runs"`
		Store struct {
			HeadAddress uint64 `json:"head_address"`
			TailAddress uint64 `json:"tail_address"`
			Keys        int64  `json:"keys"`
		} `json:"store"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("kv --json: %v in %q", err, stdout.String())
	}
	if res.Load.Keys != 20000 || res.Load.OpsPerSec <= 0 || res.Store.Keys != 20000 {
		t.Errorf("load: got %+v, store keys %d; want 20000 keys at a positive rate", res.Load, res.Store.Keys)
	}
	if len(res.Runs) != 2 || res.Runs[0].Threads != 1 || res.Runs[1].Threads != 2 {
		t.Fatalf("runs: got %+v, want threads 1 then 2", res.Runs)
	}
	for _, r := range res.Runs {
		// 256 KiB of a 2.5 MB log is in memory: most reads hit the device.
		if r.Ops <= 0 || r.DeviceReads < r.Ops/2 || r.Seconds < 0.9 {
			t.Errorf("run %+v: want ops, at least one device read per two ops, a 1 s window", r)
		}
	}
	if res.Store.HeadAddress*10 < res.Store.TailAddress*8 {
		t.Errorf("store: head %d, tail %d; want most of the log on the device", res.Store.HeadAddress, res.Store.TailAddress)
	}
	if !strings.Contains(stderr.String(), "[Throughput]") {
		t.Errorf("stderr %q: want the human [Throughput] lines", stderr.String())
	}
}

func TestBindStoreFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	get := bindStoreFlags(fs)
	if err := fs.Parse([]string{"--memory", "32m", "--page", "1m", "--segment", "2g", "--index", "8g", "--storage-tier",
		"--logdir", "/d", "--device-type", "localmemory", "--device-io-backend", "uring", "--device-throttle-limit", "64",
		"--device-completion-threads", "3", "--device-io-contexts", "5", "--sector-size", "4096"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := get()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MemoryBytes != 32<<20 || cfg.PageBytes != 1<<20 || cfg.SegmentBytes != 2<<30 || cfg.IndexBytes != 8<<30 ||
		!cfg.StorageTier || cfg.LogDir != "/d" || cfg.DeviceType != "localmemory" || cfg.Backend != "uring" ||
		cfg.ThrottleLimit != 64 || cfg.CompletionThreads != 3 || cfg.IOContexts != 5 || cfg.SectorSize != 4096 {
		t.Errorf("bindStoreFlags: got %+v", cfg)
	}
}
