package slots

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// crcBitwise is the XMODEM CRC computed bit by bit, the definition the
// table-driven CRC16 must agree with.
func crcBitwise(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c ^= uint16(x) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

func TestCRC16CheckValue(t *testing.T) {
	// 0x31C3 is the published check value of CRC-16/XMODEM.
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("CRC16(123456789) = %#04x, want 0x31c3", got)
	}
}

func TestHashTag(t *testing.T) {
	cases := []struct{ key, tag string }{
		{"plain", "plain"},
		{"{user1000}.following", "user1000"},
		{"{user1000}.followers", "user1000"},
		{"foo{}{bar}", "foo{}{bar}"},
		{"foo{{bar}}zap", "{bar"},
		{"foo{bar}{zap}", "bar"},
		{"{}x", "{}x"},
		{"x{", "x{"},
		{"x}{y", "x}{y"},
		{"", ""},
	}
	for _, c := range cases {
		if got := string(HashTag([]byte(c.key))); got != c.tag {
			t.Errorf("HashTag(%q) = %q, want %q", c.key, got, c.tag)
		}
	}
}

// TestSlotsMatchRedis asks a real cluster-enabled redis-server for CLUSTER
// KEYSLOT of keys with and without hash tags and compares.
func TestSlotsMatchRedis(t *testing.T) {
	bus := testenv.FreePort(t)
	r := testenv.MustRedisServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus))
	keys := []string{"", "a", "foo", "bar", "123456789", "{user1000}.following", "{}x", "foo{{bar}}zap",
		"foo{bar}{zap}", "x{", "0000000000000042", "\x00\xff binary \r\n", strings.Repeat("k", 300)}
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("%016d", i*7919))
	}
	for _, k := range keys {
		out, err := testenv.Command(r.Addr, "CLUSTER", "KEYSLOT", k)
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %q: %v", k, err)
		}
		want, err := strconv.Atoi(out)
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %q answered %q", k, out)
		}
		if got := OfString(k); int(got) != want {
			t.Errorf("OfString(%q) = %d, redis-server says %d", k, got, want)
		}
	}
}

func TestOfDoesNotAllocate(t *testing.T) {
	key := []byte("{user1000}.following")
	if n := testing.AllocsPerRun(100, func() { Of(key) }); n != 0 {
		t.Fatalf("Of allocates %v times per call, want 0", n)
	}
}

func TestParseRanges(t *testing.T) {
	cases := []struct {
		in   string
		want []Range
		err  string
	}{
		{"0-16383", []Range{{0, 16383}}, ""},
		{"10923-16383,0-5460", []Range{{0, 5460}, {10923, 16383}}, ""},
		{"7", []Range{{7, 7}}, ""},
		{" 1-2 , 4-5 ", []Range{{1, 2}, {4, 5}}, ""},
		{"", nil, "empty"},
		{"5-1", nil, "ends before it starts"},
		{"0-16384", nil, "not below 16384"},
		{"0-10,10-20", nil, "overlap"},
		{"a-b", nil, "not a slot number"},
		{"1-", nil, "not a slot number"},
		{"+1", nil, "not a slot number"},
		{"-3", nil, "not a slot number"},
	}
	for _, c := range cases {
		got, err := ParseRanges(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRanges(%q): got error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRanges(%q): %v", c.in, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseRanges(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for n := 1; n <= 64; n++ {
		rs := Split(n)
		next, minLen, maxLen := 0, Count, 0
		for _, r := range rs {
			if int(r.Start) != next {
				t.Fatalf("Split(%d): range %v starts at %d, want %d", n, r, r.Start, next)
			}
			next = int(r.End) + 1
			minLen, maxLen = min(minLen, r.Len()), max(maxLen, r.Len())
		}
		if next != Count || maxLen-minLen > 1 {
			t.Fatalf("Split(%d) = %v: covers up to %d, sizes %d..%d; want all %d slots, sizes within 1", n, rs, next, minLen, maxLen, Count)
		}
	}
}

// TestSplitMatchesRedisCli checks Split(3) against the slots redis-cli
// --cluster create gave a real three-master cluster.
func TestSplitMatchesRedisCli(t *testing.T) {
	c := testenv.MustRedisCluster(t, 3)
	out, err := testenv.Command(c.Nodes[0].Addr, "CLUSTER", "SLOTS")
	if err != nil {
		t.Fatalf("CLUSTER SLOTS: %v", err)
	}
	// The flattened reply is start, end, ip, port, id for each range.
	f := strings.Split(out, "\n")
	var got []string
	for i := 0; i+4 < len(f); i += 5 {
		got = append(got, f[i]+"-"+f[i+1])
	}
	var want []string
	for _, r := range Split(3) {
		want = append(want, fmt.Sprintf("%d-%d", r.Start, r.End))
	}
	sort.Strings(got)
	sort.Strings(want)
	gs, ws := strings.Join(got, ","), strings.Join(want, ",")
	if gs != ws {
		t.Fatalf("redis-cli split %s, Split(3) = %s", gs, ws)
	}
}

func TestParseNodes(t *testing.T) {
	good := "# three shards\n" +
		"aaaa 127.0.0.1:7000 0-5460\n\n" +
		"bbbb 127.0.0.1:7001 5461-10922\n" +
		"cccc [::1]:7002 10923-16383\n"
	nodes, err := ParseNodes(strings.NewReader(good))
	if err != nil {
		t.Fatalf("ParseNodes: %v", err)
	}
	if len(nodes) != 3 || nodes[2].Host != "::1" || nodes[2].Port != 7002 || nodes[1].Ranges[0] != (Range{5461, 10922}) {
		t.Fatalf("ParseNodes = %+v", nodes)
	}
	var b strings.Builder
	FormatNodes(&b, nodes)
	again, err := ParseNodes(strings.NewReader(b.String()))
	if err != nil || fmt.Sprint(again) != fmt.Sprint(nodes) {
		t.Fatalf("round trip: got %+v, %v; want %+v", again, err, nodes)
	}
	bad := []struct{ in, err string }{
		{"", "no node lines"},
		{"a 127.0.0.1:1\n", "want 3"},
		{"a 127.0.0.1 0-1\n", "not HOST:PORT"},
		{"a 127.0.0.1:0 0-1\n", "port is not"},
		{"a b:1 0-1\na c:2 2-3\n", "appears twice"},
		{"a b:1 0-1\nb b:1 2-3\n", "appears twice"},
		{"a b:1 0-10\nb c:1 10-20\n", "slot 10 is served by a"},
		{"a/b b:1 0-1\n", "only letters"},
		{"a b:1 9-2\n", "ends before"},
	}
	for _, c := range bad {
		if _, err := ParseNodes(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseNodes(%q): got %v, want an error containing %q", c.in, err, c.err)
		}
	}
}
