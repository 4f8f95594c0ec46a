package pass

import (
	"testing"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/orchestrator/target"
)

func TestExpectedKeysFollowTheSlots(t *testing.T) {
	ranges := slots.Split(3)
	var nodes []*target.Node
	for _, r := range ranges {
		nodes = append(nodes, &target.Node{Ranges: []slots.Range{r}})
	}
	const dbsize, keyLength = 5000, 16
	got := expectedKeys(nodes, dbsize, keyLength)
	var sum int64
	for i, n := range got {
		sum += n
		// About a third each: the hash spreads the keys.
		if n < dbsize/3-300 || n > dbsize/3+300 {
			t.Errorf("node %d holds %d of %d keys", i, n, dbsize)
		}
	}
	if sum != dbsize {
		t.Errorf("the nodes hold %d keys in all, want %d", sum, dbsize)
	}
	// A key's node is the one whose range holds CRC16 of its spelling.
	key := keyspace.AppendKey(nil, 1234, keyLength)
	s := slots.Of(key)
	owner := slotOwners(nodes)
	if r := ranges[owner[s]]; s < r.Start || s > r.End {
		t.Errorf("key %s (slot %d) mapped to range %v", key, s, r)
	}
}

func TestParseDeviceReads(t *testing.T) {
	for _, tc := range []struct {
		info map[string]string
		want int64
		err  bool
	}{
		{map[string]string{"Device.CompletedReads": "12345"}, 12345, false},
		{map[string]string{"Log.HeadAddress": "64"}, -1, true},
		{map[string]string{"Device.CompletedReads": "-3"}, -1, true},
		{map[string]string{"Device.CompletedReads": "x"}, -1, true},
	} {
		got, err := parseDeviceReads(tc.info)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%v: got %d, %v; want %d, error %v", tc.info, got, err, tc.want, tc.err)
		}
	}
}
