package server

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/slots"
)

// This file is the static cluster node (`tierbench server --cluster-…`):
// a master that serves the hash slots the shared node file gives it and
// answers every key of another slot with -MOVED, as Redis Cluster does,
// without a cluster bus, gossip or failover. The node file
// (internal/slots.ParseNodes) is the whole cluster's configuration; every
// node of a cluster is started with the same file.

// ClusterConfig makes the server one master of a static cluster.
type ClusterConfig struct {
	NodeID string       // this node's ID in Nodes
	Nodes  []slots.Node // every master of the cluster, this one included
}

// LoadClusterConfig reads the node file at path and checks this node's
// entry in it: nodeID must be there; announce (host:port) and slotRanges
// (A-B[,C-D]), when given, must be what the file says of this node. Each
// error names the flag at fault.
func LoadClusterConfig(path, nodeID, announce, slotRanges string) (*ClusterConfig, error) {
	if path == "" || nodeID == "" {
		return nil, fmt.Errorf("server: a cluster node needs --cluster-nodes FILE and --cluster-node-id ID")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("server: --cluster-nodes: %w", err)
	}
	defer f.Close()
	nodes, err := slots.ParseNodes(f)
	if err != nil {
		return nil, fmt.Errorf("server: --cluster-nodes %s: %w", path, err)
	}
	cfg := &ClusterConfig{NodeID: nodeID, Nodes: nodes}
	self := cfg.self()
	if self < 0 {
		return nil, fmt.Errorf("server: --cluster-node-id %s is not in --cluster-nodes %s", nodeID, path)
	}
	me := nodes[self]
	if announce != "" {
		host, port, err := net.SplitHostPort(announce)
		if err != nil {
			return nil, fmt.Errorf("server: --cluster-announce %q is not HOST:PORT", announce)
		}
		if host != me.Host || port != strconv.Itoa(me.Port) {
			return nil, fmt.Errorf("server: --cluster-announce %s, but %s gives node %s the address %s", announce, path, nodeID, me.Addr())
		}
	}
	if slotRanges != "" {
		rs, err := slots.ParseRanges(slotRanges)
		if err != nil {
			return nil, fmt.Errorf("server: --cluster-slots: %w", err)
		}
		if slots.FormatRanges(rs) != slots.FormatRanges(me.Ranges) {
			return nil, fmt.Errorf("server: --cluster-slots %s, but %s gives node %s the slots %s", slotRanges, path, nodeID, slots.FormatRanges(me.Ranges))
		}
	}
	return cfg, nil
}

func (cfg *ClusterConfig) self() int {
	for i, n := range cfg.Nodes {
		if n.ID == cfg.NodeID {
			return i
		}
	}
	return -1
}

// clusterNode is the routing state of a cluster node, fixed at start.
type clusterNode struct {
	self     int
	nodes    []slots.Node
	owner    [slots.Count]int16 // index into nodes; -1: no node serves it
	moved    [][]byte           // per node, " host:port\r\n" after "-MOVED <slot>"
	assigned int                // slots served by some node
}

func newClusterNode(cfg *ClusterConfig) (*clusterNode, error) {
	cn := &clusterNode{self: cfg.self(), nodes: cfg.Nodes}
	if cn.self < 0 {
		return nil, fmt.Errorf("server: cluster node ID %s is not among the cluster's nodes", cfg.NodeID)
	}
	for i := range cn.owner {
		cn.owner[i] = -1
	}
	for i, n := range cfg.Nodes {
		for _, r := range n.Ranges {
			for s := int(r.Start); s <= int(r.End); s++ {
				if cn.owner[s] >= 0 {
					return nil, fmt.Errorf("server: cluster slot %d is given to %s and %s", s, cfg.Nodes[cn.owner[s]].ID, n.ID)
				}
				cn.owner[s] = int16(i)
				cn.assigned++
			}
		}
		// Redis words the address as ip:port, without brackets.
		cn.moved = append(cn.moved, []byte(" "+n.Host+":"+strconv.Itoa(n.Port)+"\r\n"))
	}
	return cn, nil
}

// clusterCrossSlot is Redis's refusal of a command whose keys are in
// different slots.
const clusterCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot"

// clusterRoute checks the keys of a command against the node's slots, as
// Redis Cluster does before running it: the slot of the first key must be
// served (-CLUSTERDOWN), every key must share it (-CROSSSLOT), and this
// node must serve it (-MOVED slot host:port). It answers and returns false
// when the command may not run here. It allocates nothing.
func (c *conn) clusterRoute(cmd *commandSpec, args [][]byte) bool {
	cn := c.srv.cluster
	last := cmd.lastKey
	if last < 0 {
		last += len(args)
	}
	slot := -1
	for i := cmd.firstKey; i <= last && i < len(args); i += cmd.keyStep {
		s := int(slots.Of(args[i]))
		switch {
		case slot < 0:
			slot = s
			if cn.owner[s] < 0 {
				c.out = append(c.out, "-CLUSTERDOWN Hash slot not served\r\n"...)
				return false
			}
		case s != slot:
			c.out = appendError(c.out, clusterCrossSlot)
			return false
		}
		if cmd.keyStep <= 0 {
			break
		}
	}
	if slot < 0 || int(cn.owner[slot]) == cn.self {
		return true
	}
	c.out = append(c.out, "-MOVED "...)
	c.out = strconv.AppendInt(c.out, int64(slot), 10)
	c.out = append(c.out, cn.moved[cn.owner[slot]]...)
	return false
}

func init() {
	registerCommands(
		&commandSpec{name: "cluster", arity: -2, run: cmdCluster, group: "cluster", summary: "CLUSTER SHARDS, SLOTS, NODES, MYID, KEYSLOT, INFO of a static cluster node."},
	)
}

func cmdCluster(c *conn, args [][]byte) {
	cn := c.srv.cluster
	sub := strings.ToUpper(string(args[1]))
	if cn == nil {
		c.errorReply("ERR This instance has cluster support disabled")
		return
	}
	argc := map[string]int{"SHARDS": 2, "SLOTS": 2, "NODES": 2, "MYID": 2, "INFO": 2, "KEYSLOT": 3, "HELP": 2}
	if n, ok := argc[sub]; ok && len(args) != n {
		c.errorReply("ERR wrong number of arguments for 'cluster|" + strings.ToLower(sub) + "' command")
		return
	}
	switch sub {
	case "KEYSLOT":
		c.out = appendInt(c.out, int64(slots.Of(args[2])))
	case "MYID":
		c.out = appendBulkString(c.out, cn.nodes[cn.self].ID)
	case "INFO":
		c.out = appendBulkString(c.out, cn.info())
	case "NODES":
		c.out = appendBulkString(c.out, cn.nodesText())
	case "SLOTS":
		c.out = cn.appendSlots(c.out)
	case "SHARDS":
		c.out = cn.appendShards(c.out)
	case "HELP":
		lines := []string{"CLUSTER <subcommand> [<arg> ...]. Subcommands are:",
			"INFO", "    Return information about the cluster.",
			"KEYSLOT <key>", "    Return the hash slot for <key>.",
			"MYID", "    Return the node id.",
			"NODES", "    Return cluster configuration seen by node.",
			"SHARDS", "    Return information about slot range mappings and the nodes associated with them.",
			"SLOTS", "    Return information about slots range mappings.",
			"HELP", "    Print this help."}
		c.out = appendArray(c.out, len(lines))
		for _, l := range lines {
			c.out = appendSimple(c.out, l)
		}
	default:
		c.errorReply("ERR unknown subcommand '" + string(truncate(args[1], 128)) + "'. Try CLUSTER HELP.")
	}
}

// info is CLUSTER INFO's text. The state is ok when every slot is served,
// as Redis reports with cluster-require-full-coverage.
func (cn *clusterNode) info() string {
	state := "ok"
	if cn.assigned < slots.Count {
		state = "fail"
	}
	var b strings.Builder
	for _, kv := range [][2]string{
		{"cluster_state", state},
		{"cluster_slots_assigned", strconv.Itoa(cn.assigned)},
		{"cluster_slots_ok", strconv.Itoa(cn.assigned)},
		{"cluster_slots_pfail", "0"},
		{"cluster_slots_fail", "0"},
		{"cluster_known_nodes", strconv.Itoa(len(cn.nodes))},
		{"cluster_size", strconv.Itoa(cn.servingNodes())},
		{"cluster_current_epoch", strconv.Itoa(len(cn.nodes))},
		{"cluster_my_epoch", strconv.Itoa(cn.self + 1)},
		{"cluster_stats_messages_sent", "0"},
		{"cluster_stats_messages_received", "0"},
		{"total_cluster_links_buffer_limit_exceeded", "0"},
	} {
		b.WriteString(kv[0] + ":" + kv[1] + "\r\n")
	}
	return b.String()
}

func (cn *clusterNode) servingNodes() int {
	n := 0
	for _, node := range cn.nodes {
		if len(node.Ranges) > 0 {
			n++
		}
	}
	return n
}

// nodesText is CLUSTER NODES: "id ip:port@cport flags master ping pong
// epoch link-state slots…" a node, a line. There is no cluster bus: cport
// is 0.
func (cn *clusterNode) nodesText() string {
	var b strings.Builder
	for i, n := range cn.nodes {
		flags := "master"
		if i == cn.self {
			flags = "myself,master"
		}
		fmt.Fprintf(&b, "%s %s:%d@0 %s - 0 0 %d connected", n.ID, n.Host, n.Port, flags, i+1)
		for _, r := range n.Ranges {
			b.WriteString(" " + r.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// appendSlots appends CLUSTER SLOTS: [start, end, [ip, port, id, []]] a
// range, in slot order.
func (cn *clusterNode) appendSlots(dst []byte) []byte {
	type owned struct {
		r slots.Range
		n slots.Node
	}
	var all []owned
	for _, n := range cn.nodes {
		for _, r := range n.Ranges {
			all = append(all, owned{r, n})
		}
	}
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].r.Start < all[j-1].r.Start; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	dst = appendArray(dst, len(all))
	for _, o := range all {
		dst = appendArray(dst, 3)
		dst = appendInt(dst, int64(o.r.Start))
		dst = appendInt(dst, int64(o.r.End))
		dst = appendArray(dst, 4)
		dst = appendBulkString(dst, o.n.Host)
		dst = appendInt(dst, int64(o.n.Port))
		dst = appendBulkString(dst, o.n.ID)
		dst = appendArray(dst, 0)
	}
	return dst
}

// appendShards appends CLUSTER SHARDS: per node that serves slots, the
// RESP2 form of the map {slots: [start, end, …], nodes: [{id, port, ip,
// endpoint, role, replication-offset, health}]}.
func (cn *clusterNode) appendShards(dst []byte) []byte {
	dst = appendArray(dst, cn.servingNodes())
	for _, n := range cn.nodes {
		if len(n.Ranges) == 0 {
			continue
		}
		dst = appendArray(dst, 4)
		dst = appendBulkString(dst, "slots")
		dst = appendArray(dst, 2*len(n.Ranges))
		for _, r := range n.Ranges {
			dst = appendInt(dst, int64(r.Start))
			dst = appendInt(dst, int64(r.End))
		}
		dst = appendBulkString(dst, "nodes")
		dst = appendArray(dst, 1)
		dst = appendArray(dst, 14)
		for _, kv := range [][2]string{{"id", n.ID}, {"port", ""}, {"ip", n.Host}, {"endpoint", n.Host}, {"role", "master"}, {"replication-offset", ""}, {"health", "online"}} {
			dst = appendBulkString(dst, kv[0])
			switch kv[0] {
			case "port":
				dst = appendInt(dst, int64(n.Port))
			case "replication-offset":
				dst = appendInt(dst, 0)
			default:
				dst = appendBulkString(dst, kv[1])
			}
		}
	}
	return dst
}
