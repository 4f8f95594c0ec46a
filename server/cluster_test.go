package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/internal/testenv"
)

// tierbenchCluster starts one in-process server per slot range, all
// sharing one node file, and returns them with the file's nodes.
func tierbenchCluster(t *testing.T, ranges [][]slots.Range) ([]*Server, []slots.Node, string) {
	t.Helper()
	var nodes []slots.Node
	for i, rs := range ranges {
		nodes = append(nodes, slots.Node{ID: fmt.Sprintf("%040x", i+1), Host: "127.0.0.1", Port: testenv.FreePort(t), Ranges: rs})
	}
	path := filepath.Join(t.TempDir(), "nodes.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	slots.FormatNodes(f, nodes)
	f.Close()
	var servers []*Server
	for _, n := range nodes {
		cc, err := LoadClusterConfig(path, n.ID, n.Addr(), slots.FormatRanges(n.Ranges))
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Bind: "127.0.0.1", Port: n.Port, Store: memoryStore, Cluster: cc}, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
		servers = append(servers, s)
	}
	return servers, nodes, path
}

// rangesOf parses one slot-range list per node.
func rangesOf(t *testing.T, specs ...string) [][]slots.Range {
	var out [][]slots.Range
	for _, s := range specs {
		rs, err := slots.ParseRanges(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rs)
	}
	return out
}

// owner is the index of the node serving key.
func owner(nodes []slots.Node, key string) int {
	s := slots.OfString(key)
	for i, n := range nodes {
		for _, r := range n.Ranges {
			if s >= r.Start && s <= r.End {
				return i
			}
		}
	}
	return -1
}

func TestClusterRedirectsAsRedisWordsThem(t *testing.T) {
	servers, nodes, _ := tierbenchCluster(t, rangesOf(t, "0-5460", "5461-10922", "10923-16000"))
	c := dial(t, servers[0])
	foo := slots.OfString("foo") // 12182, node 2
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"SET", "foo", "1"}, fmt.Sprintf("-MOVED %d 127.0.0.1:%d\r\n", foo, nodes[owner(nodes, "foo")].Port)},
		{[]string{"GET", "foo"}, fmt.Sprintf("-MOVED %d 127.0.0.1:%d\r\n", foo, nodes[owner(nodes, "foo")].Port)},
		{[]string{"MGET", "{a}1", "{b}2"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
		{[]string{"MSET", "{a}1", "x", "{b}2", "y"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, fmt.Sprintf(":%d\r\n", foo)},
		{[]string{"CLUSTER", "MYID"}, fmt.Sprintf("$40\r\n%s\r\n", nodes[0].ID)},
		{[]string{"CLUSTER", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CLUSTER HELP.\r\n"},
		{[]string{"CLUSTER", "KEYSLOT"}, "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"},
		{[]string{"PING"}, "+PONG\r\n"},
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if s := slots.OfString(k); s > 16000 {
			cases = append(cases, struct {
				args []string
				want string
			}{[]string{"GET", k}, "-CLUSTERDOWN Hash slot not served\r\n"})
		}
	}
	for _, k := range []string{"{user}a", "x", "y", "z"} {
		if owner(nodes, k) == 0 {
			cases = append(cases, struct {
				args []string
				want string
			}{[]string{"SET", k, "v"}, "+OK\r\n"})
		}
	}
	for _, cs := range cases {
		if got := c.do(cs.args...); got != cs.want {
			t.Errorf("%v: got %q, want %q", cs.args, got, cs.want)
		}
	}
	info := c.do("CLUSTER", "INFO")
	for _, want := range []string{"cluster_state:fail", "cluster_slots_assigned:16001", "cluster_known_nodes:3", "cluster_size:3"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLUSTER INFO lacks %q:\n%s", want, info)
		}
	}
	nodesText := c.do("CLUSTER", "NODES")
	wantLine := fmt.Sprintf("%s 127.0.0.1:%d@0 myself,master - 0 0 1 connected 0-5460\n", nodes[0].ID, nodes[0].Port)
	if !strings.Contains(nodesText, wantLine) || !strings.Contains(nodesText, " master - 0 0 3 connected 10923-16000\n") {
		t.Errorf("CLUSTER NODES:\n%s\nwant the line %q", nodesText, wantLine)
	}

	// A server that is no cluster node says so, as Redis does.
	plain := dial(t, startServer(t, Config{}))
	if got, want := plain.do("CLUSTER", "SLOTS"), "-ERR This instance has cluster support disabled\r\n"; got != want {
		t.Errorf("CLUSTER SLOTS on a plain server: got %q, want %q", got, want)
	}
}

// TestClusterClients drives a three-shard tierbench cluster with
// go-redis's ClusterClient and redis-cli -c: GET, SET and same-slot MGET
// work, and every key lands on the shard that owns its slot.
func TestClusterClients(t *testing.T) {
	servers, nodes, _ := tierbenchCluster(t, rangesOf(t, "0-5460", "5461-10922", "10923-16383"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].Addr()}})
	defer rdb.Close()
	const keys = 300
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		if err := rdb.Set(ctx, k, "v"+strconv.Itoa(i), 0).Err(); err != nil {
			t.Fatalf("ClusterClient SET %s: %v", k, err)
		}
	}
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		if got, err := rdb.Get(ctx, k).Result(); err != nil || got != "v"+strconv.Itoa(i) {
			t.Fatalf("ClusterClient GET %s: %q, %v", k, got, err)
		}
	}
	if err := rdb.MSet(ctx, "{u1}a", "1", "{u1}b", "2").Err(); err != nil {
		t.Fatalf("MSET same slot: %v", err)
	}
	if got, err := rdb.MGet(ctx, "{u1}a", "{u1}b", "{u1}c").Result(); err != nil || fmt.Sprint(got) != "[1 2 <nil>]" {
		t.Errorf("MGET same slot: %v, %v; want [1 2 <nil>]", got, err)
	}
	shards, err := rdb.ClusterShards(ctx).Result()
	if err != nil || len(shards) != 3 {
		t.Fatalf("CLUSTER SHARDS through go-redis: %v, %v", shards, err)
	}
	for i, sh := range shards {
		if len(sh.Nodes) != 1 || sh.Nodes[0].ID != nodes[i].ID || sh.Nodes[0].Port != int64(nodes[i].Port) || sh.Nodes[0].Role != "master" ||
			len(sh.Slots) != 1 || sh.Slots[0].Start != int64(nodes[i].Ranges[0].Start) || sh.Slots[0].End != int64(nodes[i].Ranges[0].End) {
			t.Errorf("shard %d: %+v, want node %+v", i, sh, nodes[i])
		}
	}

	// redis-cli -c follows -MOVED from whichever node it asks first.
	cli := testenv.MustLookPath(t, "redis-cli")
	for i := range 30 {
		k, v := "cli:"+strconv.Itoa(i), "w"+strconv.Itoa(i)
		from := nodes[i%3]
		if out, err := exec.Command(cli, "-c", "-p", strconv.Itoa(from.Port), "SET", k, v).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "OK" {
			t.Fatalf("redis-cli -c SET %s via %s: %q, %v", k, from.Addr(), out, err)
		}
		other := nodes[(i+1)%3]
		if out, err := exec.Command(cli, "-c", "-p", strconv.Itoa(other.Port), "GET", k).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != v {
			t.Fatalf("redis-cli -c GET %s via %s: %q, %v; want %s", k, other.Addr(), out, err, v)
		}
	}

	// Every key is on its owner and on no other shard.
	var total int64
	for i, s := range servers {
		c := dial(t, s)
		total += s.Store().Stats().Keys
		for j := range keys {
			k := "key:" + strconv.Itoa(j)
			got := c.do("GET", k)
			if owner(nodes, k) == i {
				if want := fmt.Sprintf("$%d\r\nv%d\r\n", len(strconv.Itoa(j))+1, j); got != want {
					t.Errorf("shard %d GET %s: %q, want %q", i, k, got, want)
				}
			} else if !strings.HasPrefix(got, "-MOVED ") {
				t.Errorf("shard %d GET %s (owned by shard %d): %q, want -MOVED", i, k, owner(nodes, k), got)
			}
		}
	}
	if want := int64(keys + 2 + 30); total != want {
		t.Errorf("keys over the shards: %d, want %d", total, want)
	}
}

func TestClusterRouteAllocatesNothing(t *testing.T) {
	servers, _, _ := tierbenchCluster(t, rangesOf(t, "0-8191", "8192-16383"))
	c := &conn{srv: servers[0], out: make([]byte, 0, 1024)}
	get := lookupCommand([]byte("get"))
	mget := lookupCommand([]byte("mget"))
	args := [][]byte{[]byte("GET"), []byte("foo")}
	margs := [][]byte{[]byte("MGET"), []byte("{t}1"), []byte("{t}2"), []byte("{t}3")}
	allocs := testing.AllocsPerRun(100, func() {
		c.out = c.out[:0]
		c.clusterRoute(get, args)
		c.clusterRoute(mget, margs)
	})
	if allocs != 0 {
		t.Errorf("routing a GET and an MGET allocated %v times, want 0", allocs)
	}
}

func TestLoadClusterConfigErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.txt")
	os.WriteFile(path, []byte("a 127.0.0.1:7000 0-8191\nb 127.0.0.1:7001 8192-16383\n"), 0o644)
	cases := []struct {
		path, id, announce, ranges, want string
	}{
		{path, "c", "", "", "--cluster-node-id c is not in"},
		{path, "a", "127.0.0.1:7001", "", "--cluster-announce 127.0.0.1:7001, but"},
		{path, "a", "nonsense", "", "is not HOST:PORT"},
		{path, "a", "", "0-100", "--cluster-slots 0-100, but"},
		{path, "a", "", "9-1", "--cluster-slots"},
		{"", "a", "", "", "needs --cluster-nodes"},
		{filepath.Join(t.TempDir(), "missing"), "a", "", "", "--cluster-nodes"},
	}
	for _, c := range cases {
		if _, err := LoadClusterConfig(c.path, c.id, c.announce, c.ranges); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadClusterConfig(%q, %q, %q, %q): got %v, want an error containing %q", c.path, c.id, c.announce, c.ranges, err, c.want)
		}
	}
	if cc, err := LoadClusterConfig(path, "b", "127.0.0.1:7001", "8192-16383"); err != nil || cc.self() != 1 {
		t.Errorf("a matching entry: %+v, %v", cc, err)
	}
}

func FuzzClusterRoute(f *testing.F) {
	f.Add("get", []byte("foo"), []byte("bar"))
	f.Add("mget", []byte("{t}1"), []byte("{t}2"))
	f.Add("mset", []byte("{t}1"), []byte("v"))
	f.Add("del", []byte("a"), []byte("b"))
	nodes := []slots.Node{
		{ID: "a", Host: "127.0.0.1", Port: 7000, Ranges: []slots.Range{{Start: 0, End: 8000}}},
		{ID: "b", Host: "127.0.0.1", Port: 7001, Ranges: []slots.Range{{Start: 8001, End: 16000}}},
	}
	cn, err := newClusterNode(&ClusterConfig{NodeID: "a", Nodes: nodes})
	if err != nil {
		f.Fatal(err)
	}
	c := &conn{srv: &Server{cluster: cn}}
	f.Fuzz(func(t *testing.T, name string, a, b []byte) {
		spec := lookupCommand([]byte(name))
		args := [][]byte{[]byte(name), a, b}
		if spec == nil || spec.firstKey == 0 || spec.arity > 0 && spec.arity != len(args) {
			return
		}
		c.out = c.out[:0]
		ok := c.clusterRoute(spec, args)
		first := slots.Of(a)
		got := string(c.out)
		switch {
		case ok:
			if got != "" || first > 8000 {
				t.Fatalf("%s %q %q ran here with slot %d, reply %q", name, a, b, first, got)
			}
		case first > 16000:
			if got != "-CLUSTERDOWN Hash slot not served\r\n" {
				t.Fatalf("%s %q: slot %d unserved, reply %q", name, a, first, got)
			}
		case got == "-"+clusterCrossSlot+"\r\n":
			if slots.Of(b) == first || spec.keyStep != 1 {
				t.Fatalf("%s %q %q: CROSSSLOT for keys of slots %d and %d", name, a, b, first, slots.Of(b))
			}
		default:
			if want := fmt.Sprintf("-MOVED %d 127.0.0.1:7001\r\n", first); got != want || first <= 8000 {
				t.Fatalf("%s %q %q: reply %q, want %q", name, a, b, got, want)
			}
		}
	})
}
