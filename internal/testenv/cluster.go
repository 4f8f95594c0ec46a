package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisCluster is a Redis Cluster of masters only, started for one test.
type RedisCluster struct {
	Nodes []*Redis
}

// Addrs is every master's host:port.
func (c *RedisCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// MustRedisCluster starts n redis-servers with cluster-enabled, each in its
// own temp dir with its bus on a second free port, joins them with
// `redis-cli --cluster create … --cluster-yes` (slots split as redis-cli
// does), waits until every node reports cluster_state:ok, and stops and
// removes them when the test ends. Every node is proven to be the process
// started for it before the cluster is made: redis-cli joins an address
// given twice as one node that owns both shares of slots, so a node whose
// port another server took would leave a cluster with one master listed
// twice (and a "migration" from that master to itself).
func MustRedisCluster(t testing.TB, n int) *RedisCluster {
	t.Helper()
	bin := MustLookPath(t, "redis-cli")
	c := &RedisCluster{}
	for range n {
		r := startRedis(t, FreePort, "", func(port int) []string {
			dir := t.TempDir()
			return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(FreePort(t)),
				"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
				"--save", "", "--appendonly", "no", "--dir", dir}
		})
		c.Nodes = append(c.Nodes, r)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-yes")
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("testenv: redis-cli --cluster create: %v\n%s", err, out)
	}
	waitClusterOK(t, c.Nodes)
	ids := map[string]string{}
	for _, r := range c.Nodes {
		id, err := Command(r.Addr, "CLUSTER", "MYID")
		if err != nil || id == "" || strings.HasPrefix(id, "-") {
			t.Fatalf("testenv: CLUSTER MYID on %s: %q %v", r.Addr, id, err)
		}
		if other, dup := ids[id]; dup {
			t.Fatalf("testenv: cluster nodes %s and %s are the same node %s", other, r.Addr, id)
		}
		ids[id] = r.Addr
	}
	return c
}

// waitClusterOK waits up to 30 s until every node reports
// cluster_state:ok.
func waitClusterOK(t testing.TB, nodes []*Redis) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, r := range nodes {
		for {
			info, err := Command(r.Addr, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("testenv: cluster node %s not ok after 30 s: %v %q", r.Addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// Command sends one command to the RESP server at addr and returns its
// reply as text: simple strings, errors (with their '-'), integers and
// bulks as their contents, arrays flattened one element a line. It is for
// test set-up and checks, not for measuring.
func Command(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	var out strings.Builder
	if err := readFlat(bufio.NewReader(conn), &out); err != nil {
		return "", fmt.Errorf("reply to %s from %s: %w", args[0], addr, err)
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}

func readFlat(r *bufio.Reader, out *strings.Builder) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '+', ':':
		out.WriteString(line[1:] + "\n")
	case '-':
		out.WriteString(line + "\n")
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			out.WriteString("(nil)\n")
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		out.Write(buf[:n])
		out.WriteString("\n")
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return fmt.Errorf("bad array length %q", line)
		}
		for range n {
			if err := readFlat(r, out); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}
