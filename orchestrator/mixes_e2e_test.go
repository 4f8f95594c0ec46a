package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// checkMixPasses holds every pass of a mixed bundle to what a mix must
// record: GET and SET each with ops, their rates adding up to the pass's;
// device bytes per GET about a sector on a tiered server (at most two,
// for a record across a sector boundary) and none on redis; written
// bytes per SET reported; on tierbench the log's growth about a record
// per SET and the store's device share; and each of its rows' load
// check repeated after the mix in rechecks.jsonl, exact. It returns the
// passes.
func checkMixPasses(t *testing.T, out string, tiered bool, rows int) []results.PassRecord {
	t.Helper()
	rechecks, err := results.ReadRechecks(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rechecks) != rows {
		t.Errorf("%s: got %d load checks after the mix, want one per row (%d)", out, len(rechecks), rows)
	}
	for _, rc := range rechecks {
		if rc.ServerKeys != rc.DBSize || rc.DBSize != 200000 || rc.Sample.Keys != rig.MinSampleKeys || rc.Sample.Missed+rc.Sample.WrongLength+rc.Sample.Errors != 0 || rc.Error != "" {
			t.Errorf("%s after the mix: got DBSIZE %d of %d, sample %+v, error %q; want exactly 200000 and %d sampled keys all right",
				rc.Row.ID(), rc.ServerKeys, rc.DBSize, rc.Sample, rc.Error, rig.MinSampleKeys)
		}
	}
	recs, _, err := results.ReadCells(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no pass recorded", out)
	}
	record := float64(results.RecordBytes(16, 96))
	for _, rec := range recs {
		results.JudgePass(&rec, 0)
		name := rec.Row.ID() + " t=" + string(rune('0'+rec.Threads))
		var sum float64
		ops := map[string]int64{}
		for _, o := range rec.Mix {
			sum += o.OpsPerSec
			ops[o.Op] = o.Ops
		}
		if ops["GET"] <= 0 || ops["SET"] <= 0 || sum < 0.99*rec.OpsPerSec || sum > 1.01*rec.OpsPerSec {
			t.Errorf("%s: got mix %+v summing to %.0f ops/s, want GET and SET with ops adding up to the pass's %.0f", name, rec.Mix, sum, rec.OpsPerSec)
		}
		if rec.Sets != ops["SET"] || rec.Misses != 0 || rec.Errors != 0 {
			t.Errorf("%s: got %d sets of %d SETs, %d misses, %d errors; want the SETs counted and no miss", name, rec.Sets, ops["SET"], rec.Misses, rec.Errors)
		}
		t.Logf("%s: %.0f ops/s %+v, %.0f device B/GET, %d B written = %.0f B/SET, log +%d B (%.0f B/SET), %.2f of GETs from the device",
			name, rec.OpsPerSec, rec.Mix, rec.ReadBytesPerGet, rec.WriteBytes, rec.WriteBytesPerSet, rec.LogGrowth, float64(rec.LogGrowth)/float64(max(rec.Sets, 1)), rec.DeviceGetShare)
		if !tiered {
			if rec.ReadBytesPerGet >= 0.01*results.SectorBytes || rec.StoreCounted {
				t.Errorf("%s on redis: got %.0f device B/GET, store counters %v; want none", name, rec.ReadBytesPerGet, rec.StoreCounted)
			}
			continue
		}
		if rec.ReadBytesPerGet < 0.9*results.SectorBytes || rec.ReadBytesPerGet > 2*results.SectorBytes {
			t.Errorf("%s: got %.0f device B/GET, want about one %d B sector", name, rec.ReadBytesPerGet, results.SectorBytes)
		}
		if !rec.StoreCounted || rec.WriteBytes <= 0 {
			t.Errorf("%s: got store counters %v and %d B written, want both", name, rec.StoreCounted, rec.WriteBytes)
		}
		// Every SET appends one record; a page's unused end adds a little.
		if perSet := float64(rec.LogGrowth) / float64(rec.Sets); perSet < record || perSet > 1.1*record {
			t.Errorf("%s: the log grew %.0f B per SET, want one %.0f B record", name, perSet, record)
		}
		if rec.DeviceGetShare < 0.5 {
			t.Errorf("%s: %.2f of GETs read the device, want most (the dataset is 20 × memory)", name, rec.DeviceGetShare)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, results.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "## Operations of the mix") || !strings.Contains(string(report), "after the mix: DBSIZE 200000 (loaded 200000); 20000 sampled keys: 0 missed") {
		t.Errorf("report.md has no section of the mix's operations, or not its load check after the mix")
	}
	return recs
}

// TestRunMixesOnTieredServer runs YCSB-A and YCSB-B on the tiered server,
// libaio and uring, with the checks of checkMixPasses, and the exact
// load check holding after each row's mix.
func TestRunMixesOnTieredServer(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	for _, workload := range []string{"ycsb-a", "ycsb-b"} {
		data, out := filepath.Join(base, workload, "data"), filepath.Join(base, workload, "out")
		args := append(tinyArgs(t, data, out), "--runtime", "process", "--backends", "libaio,uring", "--pin", "none", "--threads", "4", "--workload", workload)
		r := runBinary(t, bin, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d:\n%s\n%s", workload, r.code, r.stdout, r.stderr)
		}
		checkMixPasses(t, out, true, 2)
		if got := strings.Count(r.stderr, "after the mix: DBSIZE 200000, exactly --dbsize; 20000 sampled keys each answered a 96 B value"); got != 2 {
			t.Errorf("%s: the load check after the mix passed on %d rows, want 2:\n%s", workload, got, r.stderr)
		}
		if !strings.Contains(r.stdout, "(GET ") || !strings.Contains(r.stdout, " + SET ") {
			t.Errorf("%s: the table does not show each operation's ops/s:\n%s", workload, r.stdout)
		}
	}
	assertNoProcesses(t, bin)
}

// TestRunMixesOnRedis runs YCSB-A and YCSB-B on redis-server through
// --server-addr (scenario memory: an untiered server): each operation's
// rates, no device reads, written bytes counted (none without
// persistence), DBSIZE exact after.
func TestRunMixesOnRedis(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	for _, workload := range []string{"ycsb-a", "ycsb-b"} {
		redis := testenv.MustRedisServer(t)
		out := filepath.Join(base, workload)
		r := runBinary(t, bin, "run", "--scenario", "memory", "--server-addr", redis.Addr, "--dbsize", "200000", "--keylength", "16", "--valuelength", "96",
			"--threads", "4", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1", "--no-fio", "--load-threads", "4",
			"--data", filepath.Join(base, "data"), "--state-dir", filepath.Join(base, "state"), "--out", out, "--workload", workload)
		if r.code != 0 {
			t.Fatalf("%s on redis: exit %d:\n%s\n%s", workload, r.code, r.stdout, r.stderr)
		}
		checkMixPasses(t, out, false, 1)
		if !strings.Contains(r.stderr, "after the mix: DBSIZE 200000, exactly --dbsize") {
			t.Errorf("%s on redis: no load check after the mix:\n%s", workload, r.stderr)
		}
	}
}
