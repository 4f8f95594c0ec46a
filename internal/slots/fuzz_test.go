package slots

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func FuzzOf(f *testing.F) {
	for _, s := range []string{"", "foo", "{user1000}.following", "{}x", "foo{{bar}}zap", "{", "}", "{a}", "x{y}z{w}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		s := Of(key)
		if s >= Count {
			t.Fatalf("Of(%q) = %d, not below %d", key, s, Count)
		}
		tag := HashTag(key)
		if want := crcBitwise(tag) % Count; s != want {
			t.Fatalf("Of(%q) = %d, bitwise CRC of its tag %q gives %d", key, s, tag, want)
		}
		if !bytes.Equal(tag, key) {
			// A tag found is non-empty, has no '}', and keys sharing it
			// share the slot.
			if len(tag) == 0 || bytes.IndexByte(tag, '}') >= 0 {
				t.Fatalf("HashTag(%q) = %q", key, tag)
			}
			other := append(append([]byte("{"), tag...), "}other"...)
			if Of(other) != s {
				t.Fatalf("%q and %q share tag %q but not the slot", key, other, tag)
			}
		}
	})
}

func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{"0-16383", "0-5460,10923-16383", "7", "1-2,4-5", "5-1", "0-10,10-20", "-", ",", "99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRanges(s)
		if err != nil {
			return
		}
		again, err := ParseRanges(FormatRanges(rs))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(rs) {
			t.Fatalf("ParseRanges(%q) = %v; its format %q reads back as %v, %v", s, rs, FormatRanges(rs), again, err)
		}
		for i, r := range rs {
			if r.Start > r.End || r.End >= Count || i > 0 && r.Start <= rs[i-1].End {
				t.Fatalf("ParseRanges(%q) = %v: range %d is out of order or bounds", s, rs, i)
			}
		}
	})
}

func FuzzParseNodes(f *testing.F) {
	f.Add("a 127.0.0.1:7000 0-5460\nb 127.0.0.1:7001 5461-16383\n")
	f.Add("# c\n\nx [::1]:1 0\n")
	f.Add("a b:1 0-10\nb c:1 10-20\n")
	f.Fuzz(func(t *testing.T, s string) {
		nodes, err := ParseNodes(strings.NewReader(s))
		if err != nil {
			return
		}
		var b strings.Builder
		if err := FormatNodes(&b, nodes); err != nil {
			t.Fatal(err)
		}
		again, err := ParseNodes(strings.NewReader(b.String()))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(nodes) {
			t.Fatalf("ParseNodes(%q) = %+v; its format %q reads back as %+v, %v", s, nodes, b.String(), again, err)
		}
	})
}
