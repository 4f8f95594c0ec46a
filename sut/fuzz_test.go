package sut

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseTemplate: any text parses or is refused with an error naming
// the template, never a panic; what parses expands to words that Quote
// writes back as a template of the same words (brace-free words only:
// Quote writes for a shell, which has no placeholders).
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"redis-server --port {port} --bind {bind} --dir {data} --save '' --appendonly no",
		`sh -c 'exec srv --port {port}' "a \"b\"" c\ d`,
		"awk '{print $1}' {{port}} {unknown}",
		"srv 'open", `x\`, "", "{port", "{{", "'\\''",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseTemplate(s)
		if err != nil {
			if !strings.Contains(err.Error(), "sut: command template") {
				t.Fatalf("ParseTemplate(%q): error %q does not name the template", s, err)
			}
			return
		}
		words, err := tpl.Expand(tplValues)
		if err != nil {
			return
		}
		if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, "{") }) {
			return
		}
		back, err := ParseTemplate(Quote(words))
		if len(words) == 0 {
			return // only empty unquoted expansions: nothing to write back
		}
		if err != nil {
			t.Fatalf("ParseTemplate(Quote(%q)) = %q: %v", words, Quote(words), err)
		}
		if got, _ := back.Expand(Values{}); !slices.Equal(got, words) {
			t.Fatalf("round trip of %q through %s: got %q", words, Quote(words), got)
		}
	})
}
