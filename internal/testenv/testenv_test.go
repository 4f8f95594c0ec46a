package testenv

import (
	"net"
	"strconv"
	"testing"
	"time"
)

func TestRedisServerAnswers(t *testing.T) {
	r := MustRedisServer(t)
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", r.Addr, err)
	}
	c.Close()
}

func TestBinaryBuilds(t *testing.T) {
	if p := MustBinary(t); p == "" {
		t.Fatalf("got empty binary path")
	}
}

// TestTakenPortIsNotMistakenForOurs hands startRedis the port of a running
// redis-server first: the one started there cannot bind it and exits, and
// startRedis must not return it as up because the other one answers PING.
func TestTakenPortIsNotMistakenForOurs(t *testing.T) {
	other := MustRedisServer(t)
	draws := 0
	pick := func(t testing.TB) int {
		draws++
		if draws == 1 {
			return other.Port
		}
		return FreePort(t)
	}
	r := startRedis(t, pick, "", func(port int) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}
	})
	if r.Port == other.Port || draws != 2 {
		t.Fatalf("got port %d after %d draws, want a second port other than the taken %d", r.Port, draws, other.Port)
	}
	for _, s := range []*Redis{r, other} {
		if pid, err := serverPid(s.Addr, ""); err != nil || pid != s.Cmd.Process.Pid {
			t.Errorf("%s answered as pid %d (%v), want %d", s.Addr, pid, err, s.Cmd.Process.Pid)
		}
	}
}

func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}

func TestClusterNodesAreDistinct(t *testing.T) {
	c := MustRedisCluster(t, 3)
	ids := map[string]bool{}
	for _, n := range c.Nodes {
		id, err := Command(n.Addr, "CLUSTER", "MYID")
		if err != nil || ids[id] {
			t.Fatalf("node %s: id %q %v; ids so far %v", n.Addr, id, err, ids)
		}
		ids[id] = true
		if pid, err := serverPid(n.Addr, ""); err != nil || pid != n.Cmd.Process.Pid {
			t.Errorf("%s answered as pid %d (%v), want %d", n.Addr, pid, err, n.Cmd.Process.Pid)
		}
	}
}
