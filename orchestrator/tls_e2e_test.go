package orchestrator

import (
	"crypto/x509"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// TestRunTLSBoth: run --tls both on the process runtime measures every
// row twice, plain and over TLS. The TLS row's server had a TLS port
// alone (its log: no plain address) and its cells were measured with no
// miss, so the clients spoke TLS; the CA's certificate is in the bundle
// and no private key is, anywhere in it; the keys' directory under the
// state dir is gone when the run ends; the table states TLS per row and
// report.md sets each cell's ops/sec and server CPU per GET side by side.
func TestRunTLSBoth(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out, state := filepath.Join(base, "data"), filepath.Join(base, "out"), filepath.Join(base, "state")
	r := runBinary(t, bin, append(tinyArgs(t, data, out), "--runtime", "process", "--tls", "both", "--backends", "uring", "--pin", "none")...)
	if r.code != 0 {
		t.Fatalf("run exited %d:\n%s", r.code, r.stderr)
	}
	plan := checkBundle(t, out, r.stdout, 2, 1)
	if len(plan.Rows) != 2 || plan.Rows[0].TLS || !plan.Rows[1].TLS {
		t.Fatalf("got rows %+v, want uring plain then uring over TLS", plan.Rows)
	}
	for _, tt := range []struct {
		log, want, notWant string
	}{
		{"server-uring-none.log", `tls_addr=""`, "tls_addr=127.0.0.1:"},
		{"server-uring-none-tls.log", "tls_addr=127.0.0.1:", "addr=127.0.0.1:"},
	} {
		b, err := os.ReadFile(filepath.Join(out, results.DirLogs, tt.log))
		if err != nil {
			t.Fatal(err)
		}
		ready := ""
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, "tierbench server ready") {
				ready = line
			}
		}
		if !strings.Contains(ready, tt.want) || strings.Contains(strings.ReplaceAll(ready, "tls_addr=", ""), tt.notWant) {
			t.Errorf("%s: got ready line %q, want %q and not %q", tt.log, ready, tt.want, tt.notWant)
		}
	}
	var res results.Results
	if err := results.ReadJSON(out, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cells {
		if c.Passes != 1 || c.Median <= 0 || c.Excluded != "" || c.ServerCPUMicrosPerGet <= 0 {
			t.Errorf("cell %s t=%d: got %d passes, %.0f ops/s, excluded %q, %.2f µs server CPU per GET; want a pass shown with its CPU", c.Row.ID(), c.Threads, c.Passes, c.Median, c.Excluded, c.ServerCPUMicrosPerGet)
		}
	}

	b, err := os.ReadFile(filepath.Join(out, results.FileTLSCA))
	if err != nil {
		t.Fatalf("the CA's certificate is not in the bundle: %v", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", results.FileTLSCA)
	}
	if ca, err := x509.ParseCertificate(block.Bytes); err != nil || !ca.IsCA {
		t.Errorf("%s: got %v (IsCA %v), want a CA certificate", results.FileTLSCA, err, err == nil && ca.IsCA)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "PRIVATE KEY") {
			t.Errorf("the bundle's %s holds a private key", p)
		}
		return nil
	})
	if left, _ := filepath.Glob(filepath.Join(state, "tls-*")); len(left) != 0 {
		t.Errorf("the run's TLS files are left in the state dir: %v", left)
	}
	table, _ := os.ReadFile(filepath.Join(out, results.FileTable))
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	for _, want := range []string{"| TLS |", "| off |", "| on  |"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("table.md lacks %q:\n%s", want, table)
		}
	}
	if !strings.Contains(string(report), "## What TLS costs") || !strings.Contains(string(report), "| Uring | no pin | 4 |") {
		t.Errorf("report.md lacks the TLS cost of uring at t=4:\n%s", report)
	}
}

// TestRunExternalRediss: --server-addr rediss://alice@host:port --auth-file
// measures a real redis-server on its TLS port as the ACL user alice (the
// default user has another password, so a client that did not log in as
// alice is refused): the load, the checks and the cells pass, the row is
// TLS on, and the password is in no output and no file of the bundle,
// and its file is gone from the state dir.
func TestRunExternalRediss(t *testing.T) {
	bin := testenv.MustBinary(t)
	const password = "s3cret-alice-pw"
	redis := testenv.MustTLSRedisServer(t, testenv.TLSServerCert, "--requirepass", "not-alice", "--user", "alice", "on", ">"+password, "~*", "+@all")
	base := testenv.MustDiskDir(t)
	out, state := filepath.Join(base, "out"), filepath.Join(base, "state")
	pwFile := filepath.Join(base, "alice.pw")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A password in the address is refused, and not repeated.
	r := runBinary(t, bin, "run", "--server-addr", "rediss://alice:"+password+"@"+redis.TLSAddr, "--no-fio", "--data", filepath.Join(base, "data"), "--out", out, "--state-dir", state)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--auth-file") || strings.Contains(r.stderr, password) {
		t.Errorf("a password in --server-addr: exit %d, want %d pointing to --auth-file without the password:\n%s", r.code, ExitUsage, r.stderr)
	}
	r = runBinary(t, bin, "run", "--scenario", "memory", "--server-addr", "rediss://alice@"+redis.TLSAddr, "--auth-file", pwFile, "--cacert", redis.CAFile,
		"--server-pid", strconv.Itoa(redis.Cmd.Process.Pid), "--dbsize", "20000", "--keylength", "16", "--valuelength", "96",
		"--threads", "2", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1", "--no-fio",
		"--data", filepath.Join(base, "data"), "--out", out, "--state-dir", state)
	if r.code != 0 {
		t.Fatalf("run exited %d:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "TLS as user alice with a password (not kept in the bundle)") || !strings.Contains(r.stdout, "| on  |") {
		t.Errorf("the run does not say it reached the server over TLS as alice, or its table lacks TLS on:\n%s\n%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, password) {
		t.Errorf("the password is in the run's output:\n%s\n%s", r.stdout, r.stderr)
	}
	var plan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Rows) != 1 || !plan.Rows[0].TLS || plan.Workload.ServerAddr != redis.TLSAddr || plan.Workload.ServerUser != "alice" {
		t.Errorf("plan: rows %+v, server %q as %q; want one TLS row, %s as alice", plan.Rows, plan.Workload.ServerAddr, plan.Workload.ServerUser, redis.TLSAddr)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), password) {
			t.Errorf("the bundle's %s holds the password", p)
		}
		return nil
	})
	if left, _ := filepath.Glob(filepath.Join(state, "auth-*")); len(left) != 0 {
		t.Errorf("the password's file is left in the state dir: %v", left)
	}
	// --resume reads the password again from the file the plan names.
	if plan.Workload.AuthFile != pwFile {
		t.Errorf("plan: AuthFile %q, want %q", plan.Workload.AuthFile, pwFile)
	}
	r = runBinary(t, bin, "run", "--resume", out, "--state-dir", state)
	if r.code != 0 || !strings.Contains(r.stderr, "as user alice with a password") {
		t.Errorf("--resume: exit %d, want 0 reaching the server as alice with a password:\n%s", r.code, r.stderr)
	}
}
