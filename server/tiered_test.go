package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/server/store"
)

// tieredStore is a store whose in-memory log holds 128 KiB: of the keys
// tieredLoad writes, the first half certainly live only on the device.
func tieredStore(t testing.TB, deviceType, backend string) store.Config {
	cfg := store.Config{
		StorageTier:  true,
		MemoryBytes:  128 << 10,
		PageBytes:    16 << 10,
		SegmentBytes: 1 << 20,
		IndexBytes:   1 << 20,
		DeviceType:   deviceType,
		Backend:      backend,
	}
	if deviceType == "native" {
		cfg.LogDir = testenv.MustDiskDir(t)
	}
	return cfg
}

const tieredKeys = 3000

// tieredDevices are the device types and backends the tiered tests run on.
var tieredDevices = []struct{ deviceType, backend string }{
	{"localmemory", ""},
	{"native", "libaio"},
	{"native", "uring"},
}

func tieredKey(i int) string { return fmt.Sprintf("key:%012d", i) }

// tieredValue is 96 bytes that name their key, so a reply carrying another
// record's value cannot pass.
func tieredValue(i int) string {
	v := fmt.Sprintf("value-of-%012d-", i)
	return v + strings.Repeat(string(rune('a'+i%26)), 96-len(v))
}

// startTiered starts a server on a tiered store (startServer skips the
// test when the kernel refuses the IO interface).
func startTiered(t *testing.T, cfg Config) *Server {
	t.Helper()
	return startServer(t, cfg)
}

// loadTiered writes tieredKeys keys with MSET batches and checks the log
// spilled to the device.
func loadTiered(t *testing.T, s *Server, c *client) {
	t.Helper()
	keysBefore := s.Store().Stats().Keys
	msetRange(t, c, 0, tieredKeys)
	st := s.Store().Stats()
	if st.Keys != keysBefore+tieredKeys {
		t.Fatalf("store holds %d keys after the load, want %d", st.Keys, keysBefore+tieredKeys)
	}
	if st.HeadAddress <= st.BeginAddress {
		t.Fatalf("HeadAddress %d not above BeginAddress %d: nothing was evicted to the device", st.HeadAddress, st.BeginAddress)
	}
}

// TestTieredPipelineOrder pipelines one batch that mixes device reads,
// memory hits, misses, MGETs, writes and other commands, and checks every
// reply is the right one in the right place, on every device backend,
// with and without scatter-gather GETs.
func TestTieredPipelineOrder(t *testing.T) {
	for _, d := range tieredDevices {
		for _, sg := range []bool{true, false} {
			name := fmt.Sprintf("%s-%s/sg-get=%v", d.deviceType, d.backend, sg)
			t.Run(name, func(t *testing.T) {
				s := startTiered(t, Config{ScatterGatherGet: sg, Store: tieredStore(t, d.deviceType, d.backend)})
				c := dial(t, s)
				loadTiered(t, s, c)
				before := s.Store().Stats().CompletedReads

				rng := rand.New(rand.NewPCG(1, 2))
				var req []byte
				var want strings.Builder
				coldGets := 0
				overwritten := map[int]bool{}
				for n := 0; n < 600; n++ {
					i := rng.IntN(tieredKeys)
					switch n % 12 {
					case 3:
						req = append(req, encodeArgs("GET", fmt.Sprintf("missing:%d", n))...)
						want.WriteString(null)
					case 5:
						req = append(req, "PING\r\n"...)
						want.WriteString("+PONG\r\n")
					case 7:
						j, k := rng.IntN(tieredKeys/2), rng.IntN(tieredKeys)
						req = append(req, encodeArgs("MGET", tieredKey(j), "missing", tieredKey(k))...)
						want.WriteString(array(bulk(valueNow(j, overwritten)), null, bulk(valueNow(k, overwritten))))
						if !overwritten[j] {
							coldGets++
						}
					case 9:
						// GET, overwrite, GET the same cold key within the
						// batch: the first GET answers the old value.
						i = rng.IntN(tieredKeys / 2)
						req = append(req, encodeArgs("GET", tieredKey(i))...)
						want.WriteString(bulk(valueNow(i, overwritten)))
						if !overwritten[i] {
							coldGets++
						}
						overwritten[i] = true
						req = append(req, encodeArgs("SET", tieredKey(i), valueNow(i, overwritten))...)
						req = append(req, encodeArgs("GET", tieredKey(i))...)
						want.WriteString("+OK\r\n" + bulk(valueNow(i, overwritten)))
					default:
						req = append(req, encodeArgs("GET", tieredKey(i))...)
						want.WriteString(bulk(valueNow(i, overwritten)))
						if i < tieredKeys/2 && !overwritten[i] {
							coldGets++
						}
					}
				}
				c.send(req)
				got := make([]byte, want.Len())
				if _, err := fullRead(c, got); err != nil {
					t.Fatalf("read replies: %v", err)
				}
				if string(got) != want.String() {
					t.Fatalf("replies differ at byte %d:\ngot  %q\nwant %q", firstDiff(string(got), want.String()),
						excerpt(string(got), firstDiff(string(got), want.String())), excerpt(want.String(), firstDiff(string(got), want.String())))
				}
				reads := s.Store().Stats().CompletedReads - before
				if reads < int64(coldGets) {
					t.Errorf("device reads during the batch = %d, want at least %d (the GETs of keys in the evicted half)", reads, coldGets)
				}
				info := c.do("INFO", "stats")
				if dg := infoInt(t, info, "device_gets"); dg < int64(coldGets) {
					t.Errorf("INFO device_gets = %d, want at least %d", dg, coldGets)
				}
			})
		}
	}
}

func valueNow(i int, overwritten map[int]bool) string {
	if overwritten[i] {
		return "new-" + tieredValue(i)
	}
	return tieredValue(i)
}

func fullRead(c *client, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func excerpt(s string, at int) string {
	return s[max(0, at-60):min(len(s), at+60)]
}

// TestTieredCommandsOnDevice runs the commands that read synchronously
// (EXISTS, DEL, INCR) on keys that live only on the device.
func TestTieredCommandsOnDevice(t *testing.T) {
	s := startTiered(t, Config{ScatterGatherGet: true, Store: tieredStore(t, "native", "libaio")})
	c := dial(t, s)
	c.do("SET", "counter", "41")
	loadTiered(t, s, c)
	runSteps(t, c, []step{
		{args: []string{"INCR", "counter"}, want: ":42\r\n"},
		{args: []string{"EXISTS", tieredKey(1), tieredKey(2), "missing"}, want: ":2\r\n"},
		{args: []string{"GET", tieredKey(3)}, want: bulk(tieredValue(3))},
		{args: []string{"DEL", tieredKey(3), "missing"}, want: ":1\r\n"},
		{args: []string{"GET", tieredKey(3)}, want: null},
		{args: []string{"EXISTS", tieredKey(3)}, want: ":0\r\n"},
		{args: []string{"DBSIZE"}, want: fmt.Sprintf(":%d\r\n", tieredKeys)}, // +counter -key 3
	})
	// A batch of EXISTS after pending GETs: EXISTS waits for them first.
	var req []byte
	var want strings.Builder
	for i := 10; i < 20; i++ {
		req = append(req, encodeArgs("GET", tieredKey(i))...)
		req = append(req, encodeArgs("EXISTS", tieredKey(i+100))...)
		want.WriteString(bulk(tieredValue(i)) + ":1\r\n")
	}
	c.send(req)
	got := make([]byte, want.Len())
	if _, err := fullRead(c, got); err != nil || string(got) != want.String() {
		t.Fatalf("GET/EXISTS batch: got %q (%v), want %q", got, err, want.String())
	}
}

// TestTieredGetAllocs proves a pipelined batch of GETs that go to the
// device (scatter-gather, replies merged in order) allocates nothing.
func TestTieredGetAllocs(t *testing.T) {
	s := startTiered(t, Config{ScatterGatherGet: true, Store: tieredStore(t, "localmemory", "")})
	loadTiered(t, s, dial(t, s))
	c := newConn(s, nil)
	t.Cleanup(c.sess.Close)
	var batch []byte
	for i := 0; i < 64; i++ {
		batch = append(batch, encodeArgs("GET", tieredKey(i*7))...)
		batch = append(batch, encodeArgs("GET", tieredKey(tieredKeys-1-i))...)
	}
	before := s.Store().Stats().CompletedReads
	wantValue := []byte(tieredValue(63 * 7))
	run := func() {
		c.r, c.w = 0, copy(c.rbuf, batch)
		c.stages.startBatch(s, c.id) // timed, as serve times it
		c.process()
		c.fillHoles()
		c.stages.written(c.stages.replyReady())
		if c.r != c.w || c.closing || !bytes.Contains(c.out, wantValue) {
			t.Fatalf("batch not answered: r=%d w=%d closing=%v", c.r, c.w, c.closing)
		}
		c.out = c.out[:0]
	}
	run()
	if allocs := testing.AllocsPerRun(50, run); allocs != 0 {
		t.Errorf("a batch of 128 GETs, half from the device: %v allocations, want 0", allocs)
	}
	if reads := s.Store().Stats().CompletedReads - before; reads < 51*64 {
		t.Errorf("device reads = %d, want at least %d: the cold GETs did not reach the device", reads, 51*64)
	}
}

// TestDBSizeCountsOtherConnectionsWrites: a SET on one connection that
// brings back a key deleted earlier (its tombstone on the device, so the
// store must read it to know the key was not live) counts in DBSIZE asked
// on another connection right after the SET's reply, with the first
// connection idle: the existence check used to wait, unsubmitted, for
// that connection's next command, and DBSIZE answered one key short.
func TestDBSizeCountsOtherConnectionsWrites(t *testing.T) {
	for _, d := range tieredDevices {
		t.Run(d.deviceType+"-"+d.backend, func(t *testing.T) {
			s := startTiered(t, Config{Store: tieredStore(t, d.deviceType, d.backend)})
			writer, asker := dial(t, s), dial(t, s)
			loadTiered(t, s, writer)
			if got := writer.do("DEL", tieredKey(0)); got != ":1\r\n" {
				t.Fatalf("DEL: got %q", got)
			}
			// Push the tombstone out of memory with as many new keys again.
			msetRange(t, writer, tieredKeys, 2*tieredKeys)
			want := fmt.Sprintf(":%d\r\n", 2*tieredKeys-1)
			if got := asker.do("DBSIZE"); got != want {
				t.Fatalf("DBSIZE after the DEL: got %q, want %q", got, want)
			}
			for round := range 3 {
				if got := writer.do("SET", tieredKey(0), tieredValue(0)); got != "+OK\r\n" {
					t.Fatalf("SET: got %q", got)
				}
				want := fmt.Sprintf(":%d\r\n", 2*tieredKeys)
				if got := asker.do("DBSIZE"); got != want {
					t.Fatalf("round %d: DBSIZE on another connection right after the SET: got %q, want %q", round, got, want)
				}
				// Delete it again, and push the tombstone out, for the next round.
				if got := writer.do("DEL", tieredKey(0)); got != ":1\r\n" {
					t.Fatalf("DEL: got %q", got)
				}
				msetRange(t, writer, tieredKeys, 2*tieredKeys)
			}
		})
	}
}

// msetRange writes keys [from, to) with MSETs of 100.
func msetRange(t *testing.T, c *client, from, to int) {
	t.Helper()
	for i := from; i < to; i += 100 {
		args := []string{"MSET"}
		for j := i; j < min(i+100, to); j++ {
			args = append(args, tieredKey(j), tieredValue(j))
		}
		if got := c.do(args...); got != "+OK\r\n" {
			t.Fatalf("MSET: got %q", got)
		}
	}
}
