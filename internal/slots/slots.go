// Package slots is the Redis Cluster key space shared by the cluster client
// (bench) and the static cluster node (server): the hash slot of a key,
// slot ranges as flags and node files write them, and the node file itself.
//
// Invariants: Of returns a value in [0, Count) for any bytes and never
// allocates; a Range always has Start <= End < Count; ParseRanges accepts
// exactly what FormatRanges writes (and single slots written alone).
package slots

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// crcTable is CRC16-CCITT/XMODEM (polynomial 0x1021, init 0, no reflection,
// no final xor) one byte at a time.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 is the XMODEM CRC of b: CRC16("123456789") is 0x31C3.
func CRC16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>8)^x]
	}
	return c
}

// HashTag is the part of key that decides its slot: the bytes between the
// first '{' and the first '}' after it when there is at least one, else the
// whole key (so "{}x" hashes as a whole).
func HashTag(key []byte) []byte {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key
				}
				return key[i+1 : j]
			}
		}
		return key
	}
	return key
}

// Of is the hash slot of key, in [0, Count).
func Of(key []byte) uint16 { return CRC16(HashTag(key)) & (Count - 1) }

// OfString is Of for a string key.
func OfString(key string) uint16 { return Of([]byte(key)) }

// Range is the slots Start..End, both included.
type Range struct{ Start, End uint16 }

// Len is the number of slots in r.
func (r Range) Len() int { return int(r.End) - int(r.Start) + 1 }

func (r Range) String() string {
	if r.Start == r.End {
		return strconv.Itoa(int(r.Start))
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// ErrRange is wrapped by every error of ParseRanges.
var ErrRange = errors.New("slots: bad slot range")

// ParseRanges parses "A-B[,C-D…]" (a single slot may be written alone as
// "A"): every slot below Count, each range ascending, no slot twice. The
// ranges come back sorted by Start.
func ParseRanges(s string) ([]Range, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty: give ranges such as 0-5460,10923-16383", ErrRange)
	}
	var out []Range
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		lo, hi, dash := strings.Cut(f, "-")
		a, err := parseSlot(lo)
		if err != nil {
			return nil, fmt.Errorf("%w: %q in %q: %v", ErrRange, f, s, err)
		}
		b := a
		if dash {
			if b, err = parseSlot(hi); err != nil {
				return nil, fmt.Errorf("%w: %q in %q: %v", ErrRange, f, s, err)
			}
		}
		if b < a {
			return nil, fmt.Errorf("%w: %q in %q ends before it starts", ErrRange, f, s)
		}
		out = append(out, Range{a, b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	for i := 1; i < len(out); i++ {
		if out[i].Start <= out[i-1].End {
			return nil, fmt.Errorf("%w: %s and %s in %q overlap", ErrRange, out[i-1], out[i], s)
		}
	}
	return out, nil
}

func parseSlot(s string) (uint16, error) {
	v, err := strconv.ParseUint(s, 10, 16)
	if err != nil || s == "" || s[0] == '+' {
		return 0, fmt.Errorf("%q is not a slot number", s)
	}
	if v >= Count {
		return 0, fmt.Errorf("slot %d is not below %d", v, Count)
	}
	return uint16(v), nil
}

// FormatRanges writes rs as ParseRanges reads them.
func FormatRanges(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// Split divides all Count slots into n contiguous ranges of nearly equal
// size the way redis-cli --cluster create does: each range ends at the
// rounded multiple of Count/n, so three nodes get 0-5460, 5461-10922 and
// 10923-16383.
func Split(n int) []Range {
	out := make([]Range, n)
	per := float64(Count) / float64(n)
	first := 0
	for i := range n {
		last := int(math.Round(per*float64(i+1) - 1))
		if i == n-1 || last > Count-1 {
			last = Count - 1
		}
		out[i] = Range{uint16(first), uint16(last)}
		first = last + 1
	}
	return out
}
