package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/slots"
)

// ClusterNode is one master of a cluster as its slot map names it.
type ClusterNode struct {
	ID     string        `json:"id"`
	Addr   string        `json:"addr"`
	Ranges []slots.Range `json:"-"`
}

// ErrNotCluster is wrapped when a server answers neither CLUSTER SHARDS nor
// CLUSTER SLOTS, or answers them with no slot served.
var ErrNotCluster = errors.New("bench: not a cluster")

// DiscoverCluster asks the node at addr for the cluster's slot map with
// CLUSTER SHARDS (Redis 7+) and, when that is refused, CLUSTER SLOTS, and
// returns the masters that serve slots, ordered by their first slot.
// Replicas are left out: every key is read from its master. A node that
// announces no address is reached at the host of addr.
func DiscoverCluster(ctx context.Context, addr, auth string) ([]ClusterNode, error) {
	return discoverCluster(ctx, addr, dialSpec{auth: auth})
}

// discoverCluster is DiscoverCluster over a connection opened by spec
// (AUTH with a user, TLS). Over TLS a node's tls-port is taken where
// CLUSTER SHARDS gives one.
func discoverCluster(ctx context.Context, addr string, spec dialSpec) ([]ClusterNode, error) {
	conn, err := dial(ctx, addr, spec)
	if err != nil {
		return nil, fmt.Errorf("bench: cluster node: %w", err)
	}
	defer conn.conn.Close()
	conn.conn.SetDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReader(conn)
	ask := func(args ...string) (any, error) {
		cmd := appendArrayHeader(nil, len(args))
		for _, a := range args {
			cmd = appendBulkString(cmd, a)
		}
		if _, err := conn.Write(cmd); err != nil {
			return nil, closedErr(err)
		}
		return readValue(br, 0)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bench: cluster node address %q: %w", addr, err)
	}
	v, err := ask("CLUSTER", "SHARDS")
	if err != nil {
		return nil, fmt.Errorf("bench: CLUSTER SHARDS on %s: %w", addr, err)
	}
	var nodes []ClusterNode
	if e, ok := v.(respError); ok {
		shardsErr := string(e)
		if v, err = ask("CLUSTER", "SLOTS"); err != nil {
			return nil, fmt.Errorf("bench: CLUSTER SLOTS on %s: %w", addr, err)
		}
		if e, ok := v.(respError); ok {
			return nil, fmt.Errorf("%w: %s answered CLUSTER SHARDS with %q and CLUSTER SLOTS with %q", ErrNotCluster, addr, shardsErr, string(e))
		}
		nodes, err = parseClusterSlots(v, host)
	} else {
		nodes, err = parseShards(v, host, spec.tls != nil)
	}
	if err != nil {
		return nil, fmt.Errorf("bench: slot map from %s: %w", addr, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: %s serves no slots", ErrNotCluster, addr)
	}
	return nodes, nil
}

// respError is an error reply, without its '-'.
type respError string

// Limits on control replies, which come from outside.
const (
	maxValueDepth  = 8
	maxValueElems  = 1 << 20
	maxControlBulk = 64 << 20
)

// readValue reads one RESP2/RESP3 reply of the control path: simple and
// bulk strings as string, integers as int64, arrays, sets and maps as
// []any (a map flattened key, value, …), nulls as nil, errors as respError.
func readValue(br *bufio.Reader, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("%w: reply nested deeper than %d", errProtocol, maxValueDepth)
	}
	line, err := br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w: reply line longer than %d bytes", errProtocol, br.Size())
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errServerClosed
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: reply line %q", errProtocol, line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return respError(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: bad integer %q", errProtocol, body)
		}
		return n, nil
	case '_':
		return nil, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxControlBulk {
			return nil, fmt.Errorf("%w: bad bulk length %q", errProtocol, body)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, errServerClosed
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return nil, fmt.Errorf("%w: bulk of %d bytes not followed by CRLF", errProtocol, n)
		}
		return string(buf[:n]), nil
	case '*', '~', '%':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxValueElems {
			return nil, fmt.Errorf("%w: bad aggregate length %q", errProtocol, body)
		}
		if line[0] == '%' {
			n *= 2
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, 0, min(n, 1024))
		for range n {
			v, err := readValue(br, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unexpected reply %q", errProtocol, line)
}

// asInt reads an integer reply element (some servers send numbers as bulks).
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func asSlot(v any) (uint16, bool) {
	n, ok := asInt(v)
	return uint16(n), ok && n >= 0 && n < slots.Count
}

// nodeAddr joins an announced ip with a port; an empty or "?" ip means the
// host the client already reached.
func nodeAddr(ip string, port int64, host string) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("node port %d is not 1..65535", port)
	}
	if ip == "" || ip == "?" {
		ip = host
	}
	return net.JoinHostPort(ip, strconv.FormatInt(port, 10)), nil
}

// parseClusterSlots reads CLUSTER SLOTS: [start, end, [ip, port, id, …],
// replicas…] per range; the first node of each range is its master.
func parseClusterSlots(v any, host string) ([]ClusterNode, error) {
	ranges, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("CLUSTER SLOTS reply is not an array")
	}
	var nodes []ClusterNode
	for i, r := range ranges {
		f, ok := r.([]any)
		if !ok || len(f) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS entry %d is not [start, end, master, …]", i)
		}
		a, ok1 := asSlot(f[0])
		b, ok2 := asSlot(f[1])
		if !ok1 || !ok2 || b < a {
			return nil, fmt.Errorf("CLUSTER SLOTS entry %d: bad slot range %v-%v", i, f[0], f[1])
		}
		m, ok := f[2].([]any)
		if !ok || len(m) < 2 {
			return nil, fmt.Errorf("CLUSTER SLOTS entry %d: master is not [ip, port, …]", i)
		}
		ip, _ := m[0].(string)
		port, ok := asInt(m[1])
		if !ok {
			return nil, fmt.Errorf("CLUSTER SLOTS entry %d: master port %v is not a number", i, m[1])
		}
		addr, err := nodeAddr(ip, port, host)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER SLOTS entry %d: %v", i, err)
		}
		id := ""
		if len(m) > 2 {
			id, _ = m[2].(string)
		}
		nodes = addRange(nodes, id, addr, slots.Range{Start: a, End: b})
	}
	return sortNodes(nodes)
}

// parseClusterShards reads CLUSTER SHARDS: per shard a map with "slots" (a
// flat start, end list) and "nodes" (maps with id, ip, endpoint, port,
// role, …); the node whose role is master serves the shard's slots.
func parseClusterShards(v any, host string) ([]ClusterNode, error) {
	return parseShards(v, host, false)
}

// parseShards is parseClusterShards taking, with tls, a master's tls-port
// over its port.
func parseShards(v any, host string, tls bool) ([]ClusterNode, error) {
	shards, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("CLUSTER SHARDS reply is not an array")
	}
	var nodes []ClusterNode
	for i, s := range shards {
		shard, err := fieldMap(s)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d: %v", i, err)
		}
		sl, _ := shard["slots"].([]any)
		if len(sl)%2 != 0 {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d: odd slots list", i)
		}
		if len(sl) == 0 {
			continue
		}
		members, _ := shard["nodes"].([]any)
		var master map[string]any
		for _, m := range members {
			nm, err := fieldMap(m)
			if err != nil {
				return nil, fmt.Errorf("CLUSTER SHARDS shard %d: node: %v", i, err)
			}
			if role, _ := nm["role"].(string); role == "master" {
				master = nm
				break
			}
		}
		if master == nil {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d serves slots but has no master", i)
		}
		ip, _ := master["ip"].(string)
		if ep, _ := master["endpoint"].(string); ep != "" && ep != "?" {
			ip = ep
		}
		port, ok := asInt(master["port"])
		if p, isTLS := asInt(master["tls-port"]); tls && isTLS {
			port, ok = p, true
		}
		if !ok {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d: master has no port", i)
		}
		addr, err := nodeAddr(ip, port, host)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER SHARDS shard %d: %v", i, err)
		}
		id, _ := master["id"].(string)
		for j := 0; j < len(sl); j += 2 {
			a, ok1 := asSlot(sl[j])
			b, ok2 := asSlot(sl[j+1])
			if !ok1 || !ok2 || b < a {
				return nil, fmt.Errorf("CLUSTER SHARDS shard %d: bad slot range %v-%v", i, sl[j], sl[j+1])
			}
			nodes = addRange(nodes, id, addr, slots.Range{Start: a, End: b})
		}
	}
	return sortNodes(nodes)
}

// fieldMap reads a RESP2 flat key, value list (or a RESP3 map) into a map.
func fieldMap(v any) (map[string]any, error) {
	f, ok := v.([]any)
	if !ok || len(f)%2 != 0 {
		return nil, fmt.Errorf("not a list of field, value pairs")
	}
	m := make(map[string]any, len(f)/2)
	for i := 0; i < len(f); i += 2 {
		k, ok := f[i].(string)
		if !ok {
			return nil, fmt.Errorf("field name %v is not a string", f[i])
		}
		m[k] = f[i+1]
	}
	return m, nil
}

func addRange(nodes []ClusterNode, id, addr string, r slots.Range) []ClusterNode {
	for i := range nodes {
		if nodes[i].Addr == addr {
			nodes[i].Ranges = append(nodes[i].Ranges, r)
			return nodes
		}
	}
	return append(nodes, ClusterNode{ID: id, Addr: addr, Ranges: []slots.Range{r}})
}

// sortNodes orders nodes and their ranges by first slot and refuses a slot
// claimed twice.
func sortNodes(nodes []ClusterNode) ([]ClusterNode, error) {
	type owned struct {
		r    slots.Range
		addr string
	}
	var all []owned
	for i := range nodes {
		rs := nodes[i].Ranges
		sort.Slice(rs, func(a, b int) bool { return rs[a].Start < rs[b].Start })
		for _, r := range rs {
			all = append(all, owned{r, nodes[i].Addr})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].r.Start < all[b].r.Start })
	for i := 1; i < len(all); i++ {
		if all[i].r.Start <= all[i-1].r.End {
			return nil, fmt.Errorf("slots %s (%s) and %s (%s) overlap", all[i-1].r, all[i-1].addr, all[i].r, all[i].addr)
		}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Ranges[0].Start < nodes[b].Ranges[0].Start })
	return nodes, nil
}

// describeNodes is a one-line summary for messages: addr (ranges), ….
func describeNodes(nodes []ClusterNode) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s (%s)", n.Addr, slots.FormatRanges(n.Ranges))
	}
	return strings.Join(parts, ", ")
}
