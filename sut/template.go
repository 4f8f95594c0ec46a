package sut

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Placeholders are the names a template may hold in braces, each filled
// from one field of Values.
var Placeholders = []string{"port", "bind", "data", "memory", "page", "segment", "index", "backend", "password_file"}

// Values are what a row gives a server's command line: its port and bind
// address, its data dir as the server sees it (/data in a container), the
// store's sizes as tierbench spells them (16m, 4m, 1g, 8g) and the row's
// device backend as the server spells it (the entry's Backends map
// tierbench's libaio and uring to it); the file holding the run's
// password (one line) as the server sees it.
type Values struct {
	Port    int
	Bind    string
	Data    string
	Memory  string
	Page    string
	Segment string
	Index   string
	Backend string
	// PasswordFile is "" when the run gives the server no password.
	PasswordFile string
}

// value is the text of placeholder name.
func (v Values) value(name string) string {
	switch name {
	case "port":
		return strconv.Itoa(v.Port)
	case "bind":
		return v.Bind
	case "data":
		return v.Data
	case "memory":
		return v.Memory
	case "page":
		return v.Page
	case "segment":
		return v.Segment
	case "index":
		return v.Index
	case "backend":
		return v.Backend
	case "password_file":
		return v.PasswordFile
	}
	return ""
}

// Template is a command line with placeholders, split into words as a
// shell splits them: blanks separate words; '…' keeps everything up to
// the next ' as it is; "…" keeps blanks, and a backslash in it escapes
// only " and \; a backslash outside quotes escapes the next character.
// {name} is a placeholder wherever it stands, inside quotes too (so that
// sh -c 'exec srv --port {port}' works), and its value is never split
// again; {{ is a literal {. A brace that does not open a name of
// letters, digits and _ closed by } is literal text.
type Template struct {
	text  string
	words []word
}

// word is one argument: literal text and placeholders in order. quoted
// says the word had quotes, so it stays even when it expands to nothing.
type word struct {
	parts  []part
	quoted bool
	// script says a shell parses the word again: it is the argument of
	// -c of a shell (sh -c '… {data} …'), so its placeholders are quoted
	// for that shell (shellQuote).
	script bool
}

// part is literal text, or a placeholder when name is set.
type part struct {
	text, name string
}

// ParseTemplate splits a command template into words. Its errors name
// the column of the fault: an unterminated quote, a trailing backslash,
// an unknown placeholder (naming it and the known ones), or nothing to run.
func ParseTemplate(s string) (Template, error) {
	t := Template{text: s}
	var (
		cur     word
		lit     strings.Builder
		inWord  bool
		quote   byte // 0, '\'' or '"'
		quoteAt int
	)
	flush := func() {
		if lit.Len() > 0 {
			cur.parts = append(cur.parts, part{text: lit.String()})
			lit.Reset()
		}
	}
	endWord := func() {
		flush()
		if inWord {
			t.words = append(t.words, cur)
		}
		cur, inWord = word{}, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			endWord()
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote, quoteAt, inWord, cur.quoted = c, i, true, true
			continue
		case quote != 0 && c == quote:
			quote = 0
			continue
		case c == '\\' && quote != '\'':
			if i+1 >= len(s) {
				return Template{}, fmt.Errorf("sut: command template %q: a backslash at its end escapes nothing", s)
			}
			next := s[i+1]
			if quote == '"' && next != '"' && next != '\\' {
				lit.WriteByte(c) // kept, as the shell keeps it in "…"
				inWord = true
				continue
			}
			lit.WriteByte(next)
			i++
			inWord = true
			continue
		case c == '{':
			inWord = true
			if strings.HasPrefix(s[i:], "{{") {
				lit.WriteByte('{')
				i++
				continue
			}
			name, ok := placeholderAt(s[i:])
			if !ok {
				lit.WriteByte(c)
				continue
			}
			if !known(name) {
				return Template{}, fmt.Errorf("sut: command template %q: unknown placeholder {%s} at column %d (known: %s)",
					s, name, i+1, knownList())
			}
			flush()
			cur.parts = append(cur.parts, part{name: name})
			i += len(name) + 1
			continue
		}
		lit.WriteByte(c)
		inWord = true
	}
	if quote != 0 {
		return Template{}, fmt.Errorf("sut: command template %q: the %c at column %d is never closed", s, quote, quoteAt+1)
	}
	endWord()
	if len(t.words) == 0 {
		return Template{}, fmt.Errorf("sut: command template %q has no program to run", s)
	}
	t.markScript()
	return t, nil
}

// shells are the programs whose -c argument is a script they parse again.
var shells = []string{"sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "busybox"}

// markScript marks the word a shell parses again: the one after the
// first option holding c (-c, -ec, -xc) of a shell program.
func (t *Template) markScript() {
	prog, ok := t.words[0].literal()
	if !ok || !slices.Contains(shells, path.Base(prog)) {
		return
	}
	for i := 1; i+1 < len(t.words); i++ {
		opt, ok := t.words[i].literal()
		if !ok || !strings.HasPrefix(opt, "-") || opt == "--" || strings.HasPrefix(opt, "--") {
			continue
		}
		if strings.Contains(opt, "c") {
			t.words[i+1].script = true
			return
		}
	}
}

// literal is the word's text when it holds no placeholder.
func (w word) literal() (string, bool) {
	var b strings.Builder
	for _, p := range w.parts {
		if p.name != "" {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// placeholderAt reads "{name}" at the start of s: name is letters, digits
// and _, at least one.
func placeholderAt(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '}':
			return s[1:j], j > 1
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		default:
			return "", false
		}
	}
	return "", false
}

func known(name string) bool {
	for _, p := range Placeholders {
		if p == name {
			return true
		}
	}
	return false
}

func knownList() string {
	out := make([]string, len(Placeholders))
	for i, p := range Placeholders {
		out[i] = "{" + p + "}"
	}
	return strings.Join(out, " ")
}

// String is the template as it was given.
func (t Template) String() string { return t.text }

// Uses reports whether the template holds placeholder name.
func (t Template) Uses(name string) bool {
	for _, w := range t.words {
		for _, p := range w.parts {
			if p.name == name {
				return true
			}
		}
	}
	return false
}

// Expand fills the placeholders from v and returns the words. A word
// without quotes that expands to nothing is dropped, as the shell drops
// it; "" and ” stay as empty arguments. A value is never split again:
// in a word a shell parses again (sh -c '… {data} …') it is quoted for
// that shell where it stands (shellQuote), so no value adds a word or a
// command; a value that cannot be quoted there is refused.
func (t Template) Expand(v Values) ([]string, error) {
	out := make([]string, 0, len(t.words))
	for _, w := range t.words {
		var b strings.Builder
		var sh shellLexer
		for _, p := range w.parts {
			if p.name == "" {
				b.WriteString(p.text)
				sh.scan(p.text)
				continue
			}
			val := v.value(p.name)
			if p.name == "password_file" && val == "" {
				return nil, fmt.Errorf("sut: {password_file}: the run gives this server no password (it does across hosts or with --server-addr, where it starts none)")
			}
			if strings.IndexByte(val, 0) >= 0 {
				return nil, fmt.Errorf("sut: {%s} %q holds a NUL byte, which no command line can carry", p.name, val)
			}
			if w.script {
				q, err := sh.quote(val)
				if err != nil {
					return nil, fmt.Errorf("sut: {%s} %q in the shell script %q: %w", p.name, val, t.text, err)
				}
				val = q
			}
			b.WriteString(val)
		}
		if b.Len() == 0 && !w.quoted {
			continue
		}
		out = append(out, b.String())
	}
	return out, nil
}

// shellLexer follows a POSIX shell's quoting through a script's text, so
// a value is quoted for where it stands: outside quotes, in '…', in "…",
// or in bash's $'…'.
type shellLexer struct {
	state   byte // 0, '\'', '"', '$' ($'…') or '#' (a comment)
	escaped bool // the last character was an unquoted backslash
	dollar  bool // the last character was an unquoted $
	inWord  bool // outside quotes, the last character was part of a word
}

func (l *shellLexer) scan(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if l.escaped {
			l.escaped = false
			continue
		}
		dollar, inWord := l.dollar, l.inWord
		l.dollar, l.inWord = false, false
		switch l.state {
		case 0:
			l.inWord = !strings.ContainsRune(" \t\n;&|()<>", rune(c))
			switch c {
			case '#':
				if !inWord {
					l.state = '#'
				}
			case '\\':
				l.escaped = true
			case '\'':
				l.state = '\''
				if dollar {
					l.state = '$'
				}
			case '"':
				l.state = '"'
			case '$':
				l.dollar = true
			}
		case '\'':
			if c == '\'' {
				l.state = 0
			}
		case '"':
			switch c {
			case '\\':
				l.escaped = true
			case '"':
				l.state = 0
			}
		case '$':
			switch c {
			case '\\':
				l.escaped = true
			case '\'':
				l.state = 0
			}
		case '#':
			if c == '\n' {
				l.state = 0
			}
		}
	}
}

// quote is val as the shell reads it back as the same text where the
// lexer stands, never ending the quotes it is in.
func (l *shellLexer) quote(val string) (string, error) {
	switch {
	case l.dollar:
		return "", fmt.Errorf("it follows a $, which would make it an expansion: put a space or quotes between them")
	case l.escaped && (val == "" || !safeWord(val)):
		return "", fmt.Errorf("it follows a \\, which would escape its first character: put a space or quotes between them")
	}
	switch l.state {
	case '\'':
		// Close the quotes, an escaped quote, open them again.
		return strings.ReplaceAll(val, "'", `'\''`), nil
	case '"':
		var b strings.Builder
		for i := 0; i < len(val); i++ {
			if c := val[i]; c == '$' || c == '`' || c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(val[i])
		}
		return b.String(), nil
	case '#':
		if strings.ContainsRune(val, '\n') {
			return "", fmt.Errorf("it stands in a comment, which a newline in it would end")
		}
		return val, nil
	case '$':
		if safeWord(val) {
			return val, nil
		}
		return "", fmt.Errorf("it stands in bash's $'…', where only letters, digits and _-./:,=+@ can be quoted: use '…' or \"…\"")
	}
	return quoteWord(val), nil
}

// Quote writes argv as one line a shell reads back into the same words:
// a word of only safe characters as it is, any other in single quotes.
func Quote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteWord(a))
	}
	return b.String()
}

func quoteWord(a string) string {
	if a == "" {
		return "''"
	}
	if !safeWord(a) {
		return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return a
}

// safeWord reports whether a holds only characters no shell gives a
// meaning: letters, digits and _-./:,=+@.
func safeWord(a string) bool {
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '=' || c == '+' || c == '@' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
