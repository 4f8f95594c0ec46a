package sut

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// scriptShape is what a shell makes of a script: how many words its
// commands have, and how many expansions (command and process
// substitutions, parameter and arithmetic expansions) it runs. A value
// quoted right changes neither.
type scriptShape struct{ words, expansions int }

// shapeOf parses script as bash does (mvdan.cc/sh: a full shell parser,
// which knows $(…), `…`, ${…}, $'…' and the rest, where a splitter of our
// own would know only what we thought of).
func shapeOf(script string) (scriptShape, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return scriptShape{}, err
	}
	var s scriptShape
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			s.words += len(n.Args)
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp:
			s.expansions++
		}
		return true
	})
	return s, nil
}

// FuzzScriptValue: no value of {data} or {bind} changes the number of
// words of the expanded template, nor, in a word a shell parses again,
// the words and expansions of that script: the value is refused or
// stays one piece of text.
func FuzzScriptValue(f *testing.F) {
	for _, c := range [][2]string{
		{`sh -c 'exec srv --port {port} --dir {data}'`, "/tmp/tb-$(touch X)"},
		{`sh -c 'exec srv --dir "{data}" & wait'`, `a" $(id) "b`},
		{`sh -c "exec srv --dir {data}"`, "it's `id`"},
		{`bash -ec 'srv --dir $'\''{data}'\'`, `\' ; id ; '`},
		{`sh -c 'srv --dir '\''{data}'\'' x'`, "a b'c"},
		{`srv --dir {data} --bind {bind}`, "a b c"},
		{`sh -xc 'srv \{data} \{bind}'`, "${HOME}"},
		{`sh -c 'srv $(echo {data})'`, "a;b"},
		{`sh -c 'srv # {data}'`, "x\nid"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, template, value string) {
		if !utf8.ValidString(value) || !utf8.ValidString(template) {
			return // the parser reads UTF-8 only; the quoting is bytewise
		}
		if value == "" {
			return // an unquoted word of nothing goes, by design (TestEmptyExpansion)
		}
		tpl, err := ParseTemplate(template)
		if err != nil {
			return
		}
		plain, err := tpl.Expand(Values{Port: 1, Data: "x", Bind: "x"})
		if err != nil {
			return
		}
		got, err := tpl.Expand(Values{Port: 1, Data: value, Bind: value})
		if err != nil {
			return // refused: nothing runs
		}
		if len(got) != len(plain) {
			t.Fatalf("%s with %q: %d words %q, with x %d", template, value, len(got), got, len(plain))
		}
		for i, w := range tpl.words {
			if !w.script {
				continue
			}
			want, err := shapeOf(plain[i])
			if err != nil {
				continue // not a script the parser reads with x either
			}
			shape, err := shapeOf(got[i])
			if err != nil {
				t.Fatalf("%s with %q: the script %q no longer parses: %v", template, value, got[i], err)
			}
			if shape != want {
				t.Fatalf("%s with %q: the script %q has %+v, with x %+v (%q)", template, value, got[i], shape, want, plain[i])
			}
		}
	})
}

// TestScriptDataRunsNothing runs the documented sh -c form with a --data
// holding $(touch …): the server's command sees the path as it is, and
// touch never runs.
func TestScriptDataRunsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "X")
	data := filepath.Join(dir, "tb-$(touch "+marker+")-`touch "+marker+"`-'q'")
	tpl, err := ParseTemplate(`sh -c 'printf "%s\n" {data} > "$0"'`)
	if err != nil {
		t.Fatal(err)
	}
	argv, err := tpl.Expand(Values{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := exec.Command(argv[0], append(argv[1:], out)...).CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, b)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("%q ran touch: the data path was parsed as shell code", argv)
	}
	if got, _ := os.ReadFile(out); string(got) != data+"\n" {
		t.Errorf("the server got --dir %q, want %q", got, data+"\n")
	}
}

// TestScriptValueRefused: a value where no quoting keeps it one piece of
// text is refused, naming the placeholder.
func TestScriptValueRefused(t *testing.T) {
	for _, c := range []struct{ template, value, want string }{
		{`bash -c 'srv --dir $'\''{data}'\'`, "a'b", "bash's $'…'"},
		{`sh -c 'srv --dir ${data}'`, "x", "follows a $"},
		{`sh -c 'srv --dir \{data}'`, "a b", "follows a \\"},
		{`srv --dir {data}`, "a\x00b", "NUL"},
		{`sh -c 'srv # {data}'`, "x\nid", "comment"},
	} {
		tpl, err := ParseTemplate(c.template)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tpl.Expand(Values{Data: c.value}); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "{data}") {
			t.Errorf("%s with %q: got %q, %v, want an error naming {data} and saying %q", c.template, c.value, got, err, c.want)
		}
	}
}
