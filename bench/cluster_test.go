package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/internal/testenv"
)

// checkClusterCell asserts that every op of a verified cluster cell was a
// hit, that the per-node figures add up to the totals, and that every key
// sent was answered exactly once.
func checkClusterCell(t *testing.T, what string, c CellResult, masters int) {
	t.Helper()
	if c.Ops == 0 || c.Hits != c.Ops || c.Misses != 0 || c.Errors != 0 || c.Mismatches != 0 || !c.Verified || c.Incomplete {
		t.Errorf("%s: ops %d hits %d misses %d errors %d mismatches %d verified %v incomplete %v; want every op a verified hit",
			what, c.Ops, c.Hits, c.Misses, c.Errors, c.Mismatches, c.Verified, c.Incomplete)
	}
	if c.Cluster == nil || len(c.Cluster.Nodes) != masters {
		t.Fatalf("%s: cluster breakdown %+v, want %d nodes", what, c.Cluster, masters)
	}
	var ops, requests int64
	for _, n := range c.Cluster.Nodes {
		if n.Ops == 0 || n.Slots == 0 || n.ID == "" {
			t.Errorf("%s: node %+v did no work or is unnamed", what, n)
		}
		ops += n.Ops
		requests += n.Requests
	}
	if ops != c.Ops || requests != c.Ops {
		t.Errorf("%s: nodes answered %d ops and were sent %d keys; the cell counts %d ops", what, ops, requests, c.Ops)
	}
}

func TestClusterLoadRoutesByslotAndVerifies(t *testing.T) {
	rc := testenv.MustRedisCluster(t, 3)
	cfg := configFor(t, rc.Nodes[1].Addr)
	cfg.Cluster = true
	cfg.Runtime = 0
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("cluster load: %v\n%s", err, human)
	}
	if got, want := rep.Load.Acknowledged, cfg.DBSize; got != want {
		t.Errorf("acknowledged %d keys, want %d", got, want)
	}
	if rep.Load.Cluster == nil || len(rep.Load.Cluster.Nodes) != 3 {
		t.Fatalf("load breakdown %+v, want 3 nodes", rep.Load.Cluster)
	}
	var total int64
	for _, n := range rep.Load.Cluster.Nodes {
		got := redisInt(t, n.Addr, "DBSIZE")
		if got != n.Hits || got == 0 {
			t.Errorf("node %s: DBSIZE %d, the load says it acknowledged %d keys there", n.Addr, got, n.Hits)
		}
		total += got
	}
	if total != cfg.DBSize {
		t.Errorf("DBSIZE over the masters sums to %d, want %d", total, cfg.DBSize)
	}
	if !strings.Contains(human, "[Cluster]: 3 masters") || !strings.Contains(human, "[Node "+rc.Nodes[0].Addr+"]") {
		t.Errorf("human output lacks the per-node lines:\n%s", human)
	}

	for _, zipf := range []bool{false, true} {
		cfg := configFor(t, rc.Nodes[2].Addr)
		cfg.Cluster, cfg.SkipLoad, cfg.Verify, cfg.Zipf = true, true, true, zipf
		cfg.Threads = []int{1, 3}
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("zipf %v: %v\n%s", zipf, err, human)
		}
		for _, c := range rep.Cells {
			checkClusterCell(t, fmt.Sprintf("zipf %v t=%d", zipf, c.Threads), c, 3)
			if c.Cluster.Moved != 0 || c.Cluster.Ask != 0 {
				t.Errorf("zipf %v: %d -MOVED, %d -ASK on a stable cluster", zipf, c.Cluster.Moved, c.Cluster.Ask)
			}
			if c.Zipf != zipf {
				t.Errorf("cell zipf %v, want %v", c.Zipf, zipf)
			}
		}
	}
}

// clusterThreadFor plans cfg, reads the cluster's map and opens one GET
// thread's links to every master, closed when the test ends.
func clusterThreadFor(t *testing.T, cfg Config) (*plan, *clusterThread) {
	t.Helper()
	p, err := cfg.plan()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := p.clusterState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	th, err := newClusterThread(context.Background(), p, cs, opGet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(th.close)
	return p, th
}

// TestClusterDrawSkewsWithinEachShard checks that every master gets the
// same number of keys and that, with --zipf, the hottest key of each shard
// is far hotter than under uniform draws.
func TestClusterDrawSkewsWithinEachShard(t *testing.T) {
	rc := testenv.MustRedisCluster(t, 3)
	for _, zipf := range []bool{false, true} {
		cfg := configFor(t, rc.Nodes[0].Addr)
		cfg.Cluster, cfg.Zipf, cfg.DBSize = true, zipf, 100000
		_, th := clusterThreadFor(t, cfg)
		const perNode = 30000
		th.draw(1, 0, perNode)
		per := make(map[int16]map[uint64]int)
		for _, k := range th.drawn {
			o := th.m.owner[th.slotOf(k)]
			if per[o] == nil {
				per[o] = map[uint64]int{}
			}
			per[o][k]++
		}
		if len(per) != 3 {
			t.Fatalf("zipf %v: keys went to %d masters, want 3", zipf, len(per))
		}
		for o, counts := range per {
			n, top := 0, 0
			for _, c := range counts {
				n += c
				top = max(top, c)
			}
			if n != perNode {
				t.Errorf("zipf %v: master %d got %d keys, want %d", zipf, o, n, perNode)
			}
			// Uniform over ~33333 keys: the hottest key is drawn a handful of
			// times; zipf 0.99 puts a few percent on the hottest key.
			if zipf && top < perNode/100 || !zipf && top > 20 {
				t.Errorf("zipf %v: master %d's hottest key was drawn %d of %d times", zipf, o, top, n)
			}
		}
	}
}

func TestClusterRoundAllocatesNothing(t *testing.T) {
	rc := testenv.MustRedisCluster(t, 3)
	cfg := configFor(t, rc.Nodes[0].Addr)
	cfg.Cluster = true
	mustLoad(t, &cfg)
	cfg.Verify = true
	p, th := clusterThreadFor(t, cfg)
	th.draw(1, 0, 4*p.Batch)
	if err := th.route(); err != nil {
		t.Fatal(err)
	}
	if len(th.active) != 3 {
		t.Fatalf("%d active links, want 3", len(th.active))
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := th.round(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a round of one %d-GET batch per master allocated %v times, want 0", p.Batch, allocs)
	}
	for _, l := range th.links {
		if c := l.rr.counts; c.hits == 0 || c.misses != 0 || c.mismatches != 0 || c.errors != 0 {
			t.Errorf("node %s counts %+v: want verified hits only", l.node.Addr, c)
		}
	}
}

// migrateSlot moves slot from its owner to another master of rc the way
// redis-cli --cluster reshard does, pausing while the slot is half moved
// (-ASK) and after the move (-MOVED) so a running client meets both. The
// source is the one node that holds keys of the slot and the target another
// node by CLUSTER MYID; a node that does not answer stops the move rather
// than being read as a holder of keys.
func migrateSlot(t *testing.T, rc *testenv.RedisCluster, slot uint16, pause time.Duration) {
	failed := false
	ask := func(addr string, args ...string) string {
		out, err := testenv.Command(addr, args...)
		if err != nil || strings.HasPrefix(out, "-") {
			t.Errorf("%s on %s: %q %v", strings.Join(args, " "), addr, out, err)
			failed = true
		}
		return out
	}
	s := strconv.Itoa(int(slot))
	var src, dst, srcID, dstID string
	for _, n := range rc.Nodes {
		id, keys := ask(n.Addr, "CLUSTER", "MYID"), ask(n.Addr, "CLUSTER", "COUNTKEYSINSLOT", s)
		if failed {
			return
		}
		switch {
		case keys != "0" && src == "":
			src, srcID = n.Addr, id
		case keys == "0" && dst == "":
			dst, dstID = n.Addr, id
		}
	}
	if src == "" || dst == "" || srcID == dstID {
		t.Errorf("slot %d: source %s (%s), target %s (%s); want one node holding its keys and another", slot, src, srcID, dst, dstID)
		return
	}
	ask(dst, "CLUSTER", "SETSLOT", s, "IMPORTING", srcID)
	ask(src, "CLUSTER", "SETSLOT", s, "MIGRATING", dstID)
	keys := strings.Split(ask(src, "CLUSTER", "GETKEYSINSLOT", s, "100000"), "\n")
	host, port, _ := net.SplitHostPort(dst)
	ask(src, append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)...)
	time.Sleep(pause)
	for _, n := range rc.Nodes {
		ask(n.Addr, "CLUSTER", "SETSLOT", s, "NODE", dstID)
	}
	time.Sleep(pause)
}

// TestClusterSlotMigratedMidRun moves the slot of key 0 while GETs run:
// the client meets -ASK while the slot is half moved and -MOVED after,
// counts both apart from the ops, and loses or corrupts no read.
func TestClusterSlotMigratedMidRun(t *testing.T) {
	rc := testenv.MustRedisCluster(t, 3)
	cfg := configFor(t, rc.Nodes[0].Addr)
	cfg.Cluster = true
	cfg.DBSize = 2000 // key 0 is in most batches
	mustLoad(t, &cfg)
	cfg.SkipLoad, cfg.Verify = true, true
	cfg.Runtime = 4 * time.Second
	cfg.PrebuiltOpsPerThread = 4000
	p, err := cfg.plan()
	if err != nil {
		t.Fatal(err)
	}
	key0 := keyspace.AppendKey(nil, 0, p.keyLength)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Start once the GETs flow, so the half-moved window meets them.
		base := commandsProcessed(rc.Nodes[0].Addr)
		for deadline := time.Now().Add(20 * time.Second); commandsProcessed(rc.Nodes[0].Addr) < base+20000 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		migrateSlot(t, rc, slots.Of(key0), 700*time.Millisecond)
	}()
	rep, human, err := runJSON(t, context.Background(), cfg)
	<-done
	if err != nil {
		t.Fatalf("GET during a migration: %v\n%s", err, human)
	}
	c := rep.Cells[0]
	checkClusterCell(t, "during migration", c, 3)
	if c.Cluster.Ask == 0 || c.Cluster.Moved == 0 || c.Cluster.MapRefreshes == 0 {
		t.Errorf("%s", human)
		t.Errorf("%d -ASK, %d -MOVED, %d map refreshes: want each at least once", c.Cluster.Ask, c.Cluster.Moved, c.Cluster.MapRefreshes)
	}
	if !strings.Contains(human, "redirections followed (not counted as ops)") {
		t.Errorf("human output does not report the redirections:\n%s", human)
	}
}

func TestClusterUsageErrors(t *testing.T) {
	cases := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Online = true }, "--online against a cluster"},
		{func(c *Config) { c.Op = "MGET" }, "-CROSSSLOT"},
		{func(c *Config) { c.Op = "MSET" }, "-CROSSSLOT"},
		{func(c *Config) { c.Pipeline = PipelineWindow }, "--cluster-bench routes batches by slot"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.Cluster = true
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a usage error containing %q", err, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Cluster, cfg.Op, cfg.Runtime = true, "MSET", 0
	if err := cfg.Validate(); err != nil {
		t.Errorf("a cluster load alone (--op MSET --runtime 0): %v", err)
	}
}

func TestNotAClusterIsNamed(t *testing.T) {
	r := testenv.MustRedisServer(t)
	_, err := DiscoverCluster(context.Background(), r.Addr, "")
	if !errors.Is(err, ErrNotCluster) || !strings.Contains(err.Error(), "cluster support disabled") {
		t.Fatalf("got %v, want ErrNotCluster quoting redis-server's refusal", err)
	}
}

// TestShardsAndSlotsAgree reads one real cluster's map both ways.
func TestShardsAndSlotsAgree(t *testing.T) {
	rc := testenv.MustRedisCluster(t, 3)
	raw := func(cmd string) any {
		c, err := net.Dial("tcp", rc.Nodes[0].Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(appendBulkString(appendBulkString(appendArrayHeader(nil, 2), "CLUSTER"), cmd))
		v, err := readValue(bufio.NewReader(c), 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, err := parseClusterShards(raw("SHARDS"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseClusterSlots(raw("SLOTS"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 3 {
		t.Fatalf("CLUSTER SHARDS gives %v, CLUSTER SLOTS %v", a, b)
	}
	for i, n := range a {
		if n.Addr != rc.Nodes[i].Addr && !strings.Contains(fmt.Sprint(rc.Addrs()), n.Addr) {
			t.Errorf("node %s is not one of %v", n.Addr, rc.Addrs())
		}
	}
}

func TestParseRedirect(t *testing.T) {
	cases := []struct {
		in   string
		ask  bool
		slot uint16
		addr string
		ok   bool
	}{
		{"MOVED 3999 127.0.0.1:6381", false, 3999, "127.0.0.1:6381", true},
		{"ASK 0 [::1]:7000", true, 0, "[::1]:7000", true},
		{"MOVED 16384 127.0.0.1:1", false, 0, "", false},
		{"MOVED x 127.0.0.1:1", false, 0, "", false},
		{"MOVED 1", false, 0, "", false},
		{"MOVED 1 ", false, 0, "", false},
		{"MOVED 1 nohostport", false, 0, "", false},
		{"ERR unknown command", false, 0, "", false},
		{"CROSSSLOT Keys in request don't hash to the same slot", false, 0, "", false},
	}
	for _, c := range cases {
		ask, slot, addr, ok := parseRedirect([]byte(c.in))
		if ask != c.ask || slot != c.slot || addr != c.addr || ok != c.ok {
			t.Errorf("parseRedirect(%q) = %v %d %q %v, want %v %d %q %v", c.in, ask, slot, addr, ok, c.ask, c.slot, c.addr, c.ok)
		}
	}
}

func FuzzParseRedirect(f *testing.F) {
	for _, s := range []string{"MOVED 3999 127.0.0.1:6381", "ASK 1 h:2", "MOVED  x", "ASK 99999 a:b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ask, slot, addr, ok := parseRedirect(b)
		if !ok {
			return
		}
		kind := "MOVED"
		if ask {
			kind = "ASK"
		}
		if slot >= slots.Count || string(b) != fmt.Sprintf("%s %d %s", kind, slot, addr) && !strings.HasPrefix(string(b), kind+" 0") {
			t.Fatalf("parseRedirect(%q) = %v %d %q", b, ask, slot, addr)
		}
	})
}

func FuzzClusterMap(f *testing.F) {
	f.Add([]byte("*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"))
	f.Add([]byte("*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*6\r\n$2\r\nid\r\n$1\r\na\r\n$4\r\nport\r\n:1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"))
	f.Add([]byte("%1\r\n+a\r\n_\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := readValue(bufio.NewReader(strings.NewReader(string(b))), 0)
		if err != nil {
			return
		}
		for _, parse := range []func(any, string) ([]ClusterNode, error){parseClusterSlots, parseClusterShards} {
			nodes, err := parse(v, "127.0.0.1")
			if err != nil {
				continue
			}
			seen := map[uint16]bool{}
			for _, n := range nodes {
				if _, _, err := net.SplitHostPort(n.Addr); err != nil {
					t.Fatalf("node address %q: %v", n.Addr, err)
				}
				for _, r := range n.Ranges {
					if r.Start > r.End || r.End >= slots.Count {
						t.Fatalf("range %v out of bounds", r)
					}
					if seen[r.Start] {
						t.Fatalf("slot %d claimed twice", r.Start)
					}
					seen[r.Start] = true
				}
			}
			_ = newSlotMap(nodes, 1)
		}
	})
}

// TestClusterJSONGolden pins the names of the per-node breakdown, which
// the orchestrator reads, apart from report.golden.json.
func TestClusterJSONGolden(t *testing.T) {
	rep := &Report{Cells: []CellResult{{Op: "GET", Threads: 1, Batch: 1, Pipeline: "batch", Ops: 3, Hits: 3, KeyDist: "uniform", Cluster: &ClusterResult{
		Moved: 1, Ask: 2, MapRefreshes: 1,
		Nodes: []NodeResult{{ID: "abc", Addr: "127.0.0.1:7000", Slots: 16384, Requests: 3, Ops: 3, OpsPerSec: 1.5, Hits: 3, Moved: 1, Ask: 2}},
	}}}}
	checkReportGolden(t, rep, "cluster.golden.json")
}

// TestClusterBenchAgainstTierbenchShards starts two tiered tierbench
// servers as one static cluster (the CLI's --cluster-… flags, one node
// file) and drives them with --cluster-bench: the load lands each key on
// its owner only and every GET verifies.
func TestClusterBenchAgainstTierbenchShards(t *testing.T) {
	bin := testenv.MustBinary(t)
	ranges := slots.Split(2)
	var nodes []slots.Node
	for i, r := range ranges {
		nodes = append(nodes, slots.Node{ID: fmt.Sprintf("shard%d", i), Host: "127.0.0.1", Port: testenv.FreePort(t), Ranges: []slots.Range{r}})
	}
	file := filepath.Join(t.TempDir(), "nodes.txt")
	var b strings.Builder
	slots.FormatNodes(&b, nodes)
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		srv := exec.Command(bin, "server", "--port", strconv.Itoa(n.Port), "--storage-tier",
			"--memory", "256k", "--page", "64k", "--segment", "1m", "--index", "1m", "--logdir", testenv.MustDiskDir(t),
			"--device-io-backend", "uring", "--cluster-nodes", file, "--cluster-node-id", n.ID, "--cluster-announce", n.Addr(), "--cluster-slots", slots.FormatRanges(n.Ranges))
		srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var logs bytes.Buffer
		srv.Stderr = &logs
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			testenv.StopProcess(srv)
			if t.Failed() {
				t.Logf("server %s:\n%s", n.ID, logs.String())
			}
		})
		testenv.MustWaitPing(t, n.Addr(), 20*time.Second)
	}
	cfg := configFor(t, nodes[1].Addr())
	cfg.Cluster, cfg.Verify = true, true
	cfg.DBSize, cfg.KeyLength, cfg.ValueLength = 20011, 16, 96
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("cluster load and verified GETs: %v\n%s", err, human)
	}
	var total int64
	for i, n := range rep.Load.Cluster.Nodes {
		got := redisInt(t, n.Addr, "DBSIZE")
		if n.Addr != nodes[i].Addr() || n.ID != nodes[i].ID || got != n.Hits || n.Slots != ranges[i].Len() {
			t.Errorf("node %d: %+v, DBSIZE %d; want %s (%s, %d slots) holding what it acknowledged", i, n, got, nodes[i].Addr(), nodes[i].ID, ranges[i].Len())
		}
		total += got
	}
	if total != cfg.DBSize || rep.Load.Acknowledged != cfg.DBSize {
		t.Errorf("DBSIZE sums to %d, acknowledged %d; want %d", total, rep.Load.Acknowledged, cfg.DBSize)
	}
	for _, c := range rep.Cells {
		checkClusterCell(t, fmt.Sprintf("tierbench shards t=%d", c.Threads), c, 2)
	}
}
