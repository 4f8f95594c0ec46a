package slots

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// Node is one master of a static cluster: its ID, the address clients
// reach it at, and the slots it serves.
type Node struct {
	ID     string
	Host   string
	Port   int
	Ranges []Range
}

// Addr is host:port.
func (n Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// ErrNodes is wrapped by every error of ParseNodes.
var ErrNodes = errors.New("slots: bad node file")

// maxIDBytes bounds a node ID; Redis's are 40 hex digits.
const maxIDBytes = 64

// ParseNodes reads a node file: one master a line, "ID HOST:PORT RANGES"
// with RANGES as ParseRanges reads them; blank lines and lines starting
// with '#' are skipped. Every ID and address is unique and every slot is
// served by at most one node (a slot served by none is allowed: clients
// get -CLUSTERDOWN for it).
func ParseNodes(r io.Reader) ([]Node, error) {
	var nodes []Node
	owner := make(map[uint16]string)
	ids := make(map[string]bool)
	addrs := make(map[string]bool)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: line %d has %d fields, want 3 (ID HOST:PORT RANGES): %q", ErrNodes, line, len(f), text)
		}
		n, err := parseNode(f)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrNodes, line, err)
		}
		if ids[n.ID] {
			return nil, fmt.Errorf("%w: line %d: node ID %s appears twice", ErrNodes, line, n.ID)
		}
		if addrs[n.Addr()] {
			return nil, fmt.Errorf("%w: line %d: address %s appears twice", ErrNodes, line, n.Addr())
		}
		ids[n.ID], addrs[n.Addr()] = true, true
		for _, rg := range n.Ranges {
			for s := int(rg.Start); s <= int(rg.End); s++ {
				if other, ok := owner[uint16(s)]; ok {
					return nil, fmt.Errorf("%w: line %d: slot %d is served by %s already", ErrNodes, line, s, other)
				}
				owner[uint16(s)] = n.ID
			}
		}
		nodes = append(nodes, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNodes, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: no node lines", ErrNodes)
	}
	return nodes, nil
}

func parseNode(f []string) (Node, error) {
	id := f[0]
	if len(id) > maxIDBytes {
		return Node{}, fmt.Errorf("node ID %.20q… is longer than %d bytes", id, maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return Node{}, fmt.Errorf("node ID %q: only letters, digits, '-' and '_'", id)
		}
	}
	host, port, err := net.SplitHostPort(f[1])
	if err != nil || host == "" {
		return Node{}, fmt.Errorf("address %q is not HOST:PORT", f[1])
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return Node{}, fmt.Errorf("address %q: port is not 1..65535", f[1])
	}
	rs, err := ParseRanges(f[2])
	if err != nil {
		return Node{}, err
	}
	return Node{ID: id, Host: host, Port: p, Ranges: rs}, nil
}

// FormatNodes writes nodes as ParseNodes reads them.
func FormatNodes(w io.Writer, nodes []Node) error {
	for _, n := range nodes {
		if _, err := fmt.Fprintf(w, "%s %s %s\n", n.ID, n.Addr(), FormatRanges(n.Ranges)); err != nil {
			return err
		}
	}
	return nil
}
