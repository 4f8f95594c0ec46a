package bench

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestLoadIsExactAndVerifyPasses(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Runtime = 0 // load only
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, human)
	}
	if rep.Load == nil {
		t.Fatalf("load is null in the report")
	}
	if got, want := rep.Load.Acknowledged, cfg.DBSize; got != want {
		t.Errorf("acknowledged %d keys, want %d", got, want)
	}
	if got := redisInt(t, r.Addr, "DBSIZE"); got != cfg.DBSize {
		t.Errorf("DBSIZE %d after the load, want %d (dbsize %d over %d load threads)", got, cfg.DBSize, cfg.DBSize, cfg.LoadThreads)
	}
	if len(rep.Cells) != 0 {
		t.Errorf("--runtime 0 ran %d cells, want none", len(rep.Cells))
	}
	if !regexp.MustCompile(`\[Total time\]: [0-9.]+ ms for 10007 ops`).MatchString(human) {
		t.Errorf("human output lacks the [Total time] line for 10007 ops:\n%s", human)
	}

	for _, op := range []string{"GET", "MGET"} {
		cfg := configFor(t, r.Addr)
		cfg.SkipLoad = true
		cfg.Op = op
		cfg.Verify = true
		cfg.Threads = []int{1, 3}
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s --verify on a loaded redis: %v\n%s", op, err, human)
		}
		if rep.Load != nil {
			t.Errorf("-s still reported a load")
		}
		if len(rep.Cells) != 2 {
			t.Fatalf("%s: %d cells, want 2", op, len(rep.Cells))
		}
		for _, c := range rep.Cells {
			if c.Ops == 0 || c.Hits != c.Ops || c.Misses != 0 || c.Errors != 0 || c.Mismatches != 0 || !c.Verified {
				t.Errorf("%s t=%d: ops %d hits %d misses %d errors %d mismatches %d verified %v; want every op a verified hit",
					op, c.Threads, c.Ops, c.Hits, c.Misses, c.Errors, c.Mismatches, c.Verified)
			}
			if c.Ops%int64(cfg.Batch) != 0 {
				t.Errorf("%s t=%d: %d ops is not whole batches of %d", op, c.Threads, c.Ops, cfg.Batch)
			}
			if c.BytesSent == 0 || c.BytesReceived < c.Ops*int64(cfg.ValueLength) || c.ClientCPUSeconds <= 0 || c.Incomplete {
				t.Errorf("%s t=%d: bytes sent %d received %d cpu %v incomplete %v: implausible", op, c.Threads, c.BytesSent, c.BytesReceived, c.ClientCPUSeconds, c.Incomplete)
			}
		}
	}
}

func TestMissesAreCountedNotHidden(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.DBSize = 1000
	cfg.KeyLength = 4
	mustLoad(t, &cfg)
	// Twice the loaded range: half the keys were never written.
	cfg.DBSize = 2000
	cfg.SkipLoad = true
	cfg.Runtime = 300 * time.Millisecond
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, human)
	}
	c := rep.Cells[0]
	if c.Hits+c.Misses != c.Ops {
		t.Errorf("hits %d + misses %d != ops %d", c.Hits, c.Misses, c.Ops)
	}
	if share := float64(c.Misses) / float64(c.Ops); share < 0.45 || share > 0.55 {
		t.Errorf("misses are %.3f of ops, want about 0.5 (half the range unloaded)", share)
	}
	if !strings.Contains(human, "[Misses]: "+strconv.FormatInt(c.Misses, 10)) || !strings.Contains(human, "were misses") {
		t.Errorf("human output does not report the misses:\n%s", human)
	}
	cfg.Verify = true
	_, _, err = runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), "misses") {
		t.Errorf("--verify over an unloaded range: got %v, want ErrVerify counting misses", err)
	}
}

func TestVerifyCatchesOneWrongValue(t *testing.T) {
	addr := fakeServer(t, 8, 150)
	cfg := configFor(t, addr)
	cfg.SkipLoad = true
	cfg.Verify = true
	cfg.Runtime = 200 * time.Millisecond
	rep, human, err := runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("got %v, want ErrVerify\n%s", err, human)
	}
	c := rep.Cells[0]
	if c.Mismatches != 1 || c.Misses != 0 || c.Errors != 0 {
		t.Errorf("mismatches %d misses %d errors %d, want exactly 1 mismatch", c.Mismatches, c.Misses, c.Errors)
	}
	if !strings.Contains(err.Error(), "1 mismatched values") || !strings.Contains(human, "[Verify]: 1 mismatched values") {
		t.Errorf("the mismatch is not reported: err %v\n%s", err, human)
	}
}

func TestServerErrorReplyIsShown(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.DBSize = 100
	cfg.Op = "INCR"
	cfg.ValueLength = 20 // too large for a 64-bit integer
	rep, human, err := runJSON(t, context.Background(), cfg)
	if !errors.Is(err, ErrReplies) || !strings.Contains(err.Error(), "ERR value is not an integer") {
		t.Fatalf("got %v, want ErrReplies showing the server's error\n%s", err, human)
	}
	if c := rep.Cells[0]; c.Errors == 0 || c.Errors != c.Ops || !strings.HasPrefix(c.FirstError, "ERR value is not an integer") {
		t.Errorf("errors %d of %d ops, first %q: want every INCR refused with the server's text", c.Errors, c.Ops, c.FirstError)
	}
	// Up to 18 digits the loaded values are valid INCR operands.
	cfg.ValueLength = 8
	if _, human, err := runJSON(t, context.Background(), cfg); err != nil {
		t.Errorf("INCR on 8-digit values: %v\n%s", err, human)
	}
}

func TestAuthFailures(t *testing.T) {
	r := testenv.MustRedisServer(t, "--requirepass", "s3cret")
	tests := []struct {
		auth string
		want string // "" means success
	}{
		{"wrong", "WRONGPASS"},
		{"", "requires a password (give --auth)"},
		{"s3cret", ""},
	}
	for _, tt := range tests {
		cfg := configFor(t, r.Addr)
		cfg.Auth = tt.auth
		cfg.Runtime = 0
		_, _, err := runJSON(t, context.Background(), cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("--auth %q: %v, want success", tt.auth, err)
		case tt.want != "" && (!errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), r.Addr)):
			t.Errorf("--auth %q: got %v, want ErrAuth naming %s and %q", tt.auth, err, r.Addr, tt.want)
		}
	}
}

func TestConnectionRefusedNamesAddress(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg := configFor(t, addr)
	rep, _, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "connect to "+addr+": connection refused") {
		t.Errorf("got %v, want a connection refused error naming %s", err, addr)
	}
	if rep != nil {
		t.Errorf("nothing was measured but a JSON document was printed")
	}
}

func TestServerClosingMidRunMarksIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Runtime = 20 * time.Second
	go killAfterCommands(r, 100000) // once the timed cell has done some GETs
	start := time.Now()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "server closed the connection") && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("got %v, want the server closing named\n%s", err, human)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the run went on for %v after the server died", time.Since(start))
	}
	if rep == nil || len(rep.Cells) != 1 {
		t.Fatalf("report %+v: want the cell measured so far", rep)
	}
	if c := rep.Cells[0]; !c.Incomplete || c.Ops == 0 {
		t.Errorf("cell incomplete %v ops %d, want incomplete with the ops done so far", c.Incomplete, c.Ops)
	}
	if !strings.Contains(human, "[Incomplete]") {
		t.Errorf("human output does not say the cell is incomplete:\n%s", human)
	}
}

func TestInterruptedCellIsIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad = true
	cfg.Runtime = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once the timed window has done some GETs.
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < 50000 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	rep, _, err := runJSON(t, ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the interruption reported", err)
	}
	if c := rep.Cells[0]; !c.Incomplete || c.Ops == 0 || c.Seconds > 5 {
		t.Errorf("cell incomplete %v ops %d seconds %v: want incomplete, prompt, with the ops done", c.Incomplete, c.Ops, c.Seconds)
	}
}
