package server

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"", "", true},
		{"", "a", false},
		{"k1", "k1", true},
		{"k1", "k10", false},
		{"k?", "k1", true},
		{"k?", "k", false},
		{"*3", "k3", true},
		{"*3", "k33", true},
		{"*3", "k34", false},
		{"u*2", "user:2", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a**c", "ac", true},
		{"user:[1]", "user:1", true},
		{"user:[^1]", "user:1", false},
		{"user:[^1]", "user:2", true},
		{"user:[0-1]", "user:1", true},
		{"user:[2-1]", "user:1", true}, // a reversed range is swapped
		{"user:[2-1]", "user:3", false},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[]", "a", false},
		{"[^]", "a", true},
		{"k[", "k", false},
		{"k[", "k[", false}, // the unterminated set takes the rest: empty set
		{"k[ab", "ka", true},
		{"k[ab", "kab", false},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`[\]]`, "]", true},
		{`[a\-z]`, "-", true},
		{`[a\-z]`, "b", false},
		{`a\`, `a\`, true},
		{"*x*y*z*", "xxyyzz", true},
		{"*x*y*z*", "zzyyxx", false},
	} {
		if got := globMatch([]byte(tc.pattern), []byte(tc.s)); got != tc.want {
			t.Errorf("globMatch(%q, %q): got %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// globNaive is the glob as Redis's stringmatchlen writes it, recursively:
// the oracle for FuzzGlobMatch.
func globNaive(p, s []byte) bool {
	for len(p) > 0 {
		if p[0] == '*' {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globNaive(p, s[i:]) {
					return true
				}
			}
			return false
		}
		if len(s) == 0 {
			return false
		}
		n, ok := globOne(p, s[0])
		if !ok {
			return false
		}
		p, s = p[n:], s[1:]
	}
	return len(s) == 0
}

// FuzzGlobMatch feeds arbitrary patterns (client bytes) and keys: the
// matcher must not panic and must agree with the recursive definition.
func FuzzGlobMatch(f *testing.F) {
	for _, seed := range [][2]string{{"*", "k"}, {"user:[^1]", "user:2"}, {`[a\-z]*?`, "-xy"}, {"k[", "k"}, {`a\`, `a\`}, {"*a*b", "aab"}} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, p, s []byte) {
		if len(p) > 24 || len(s) > 24 {
			return // the oracle is exponential in the number of stars
		}
		if got, want := globMatch(p, s), globNaive(p, s); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, the recursive definition says %v", p, s, got, want)
		}
	})
}
