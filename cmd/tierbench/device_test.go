package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDeviceFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--help"}, 0, "device-io-contexts"},
		{[]string{"--file-size", "12q"}, 2, "--file-size"},
		{[]string{"--backend", "spdk", "--dir", "/var/tmp/x"}, 2, `backend "spdk"`},
		{[]string{"--backend", "uring"}, 2, "--dir is required"},
		{[]string{"--backend", "localmemory", "--compare-fio"}, 2, "--compare-fio needs a file backend"},
		{[]string{"--backend", "localmemory", "--block", "700"}, 2, "block 700"},
		{[]string{"--qd", "x"}, 2, "invalid value"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(append([]string{"device"}, tc.args...), &stdout, &stderr)
		// Asked-for help is on stdout, every error on stderr.
		if out := stdout.String() + stderr.String(); code != tc.wantCode || !strings.Contains(out, tc.wantErr) {
			t.Errorf("device %q: got exit %d, output %q; want exit %d and %q", tc.args, code, out, tc.wantCode, tc.wantErr)
		}
	}
}

// TestDeviceLocalMemoryJSON runs the real benchmark on the localmemory
// backend for a second and checks the JSON document's contract.
func TestDeviceLocalMemoryJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"device", "--backend", "localmemory", "--file-size", "8m", "--threads", "2", "--qd", "16",
		"--runtime", "1", "--verify", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	var doc struct {
		Backend   string
		Block     int
		Threads   int
		QD        int
		Seconds   float64
		Ops       int64
		Errors    int64
		IOPS      float64
		MBPerSec  float64            `json:"mb_per_sec"`
		LatencyUs map[string]float64 `json:"latency_us"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout.String())
	}
	if doc.Backend != "localmemory" || doc.Block != 512 || doc.Threads != 2 || doc.QD != 16 {
		t.Errorf("shape: got %+v, want localmemory, 512, 2, 16", doc)
	}
	if doc.Ops == 0 || doc.Errors != 0 || doc.IOPS <= 0 || doc.MBPerSec <= 0 || doc.Seconds < 0.9 {
		t.Errorf("counts: got ops %d, errors %d, iops %v, MB/s %v, seconds %v", doc.Ops, doc.Errors, doc.IOPS, doc.MBPerSec, doc.Seconds)
	}
	for _, k := range []string{"min", "p50", "p99", "p999"} {
		if _, ok := doc.LatencyUs[k]; !ok {
			t.Errorf("latency_us lacks %q: %s", k, stdout.String())
		}
	}
}
