package sut

import (
	"slices"
	"strings"
	"testing"
)

var tplValues = Values{Port: 7001, Bind: "127.0.0.1", Data: "/var/tmp/my data", Memory: "16m", Page: "4m", Segment: "1g", Index: "8g", Backend: "uring"}

func TestParseTemplate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"redis-server --port {port}", []string{"redis-server", "--port", "7001"}},
		{"  srv\t--port={port}  --bind {bind}\n", []string{"srv", "--port=7001", "--bind", "127.0.0.1"}},
		// A value with blanks is one word: never split again.
		{"srv --dir {data}", []string{"srv", "--dir", "/var/tmp/my data"}},
		{"srv --save '' --x \"\"", []string{"srv", "--save", "", "--x", ""}},
		{`srv 'a b' "c d" e\ f`, []string{"srv", "a b", "c d", "e f"}},
		{`srv 'it'\''s'`, []string{"srv", "it's"}},
		{`srv "say \"hi\" \\ \n"`, []string{"srv", `say "hi" \ \n`}},
		{`srv 'no \escape'`, []string{"srv", `no \escape`}},
		// Placeholders inside quotes too, for sh -c.
		{"sh -c 'exec srv --port {port} --dir \"{data}\"'", []string{"sh", "-c", `exec srv --port 7001 --dir "/var/tmp/my data"`}},
		{"srv --backend={backend} --mem {memory}/{page}/{segment}/{index}", []string{"srv", "--backend=uring", "--mem", "16m/4m/1g/8g"}},
		// Braces that are no placeholder are text; {{ is a literal {.
		{"awk '{print $1}' {} {{port}", []string{"awk", "{print $1}", "{}", "{port}"}},
		{`srv \{port}`, []string{"srv", "{port}"}},
		{"srv {port", []string{"srv", "{port"}},
		{"a''b", []string{"ab"}},
	} {
		tpl, err := ParseTemplate(c.in)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", c.in, err)
			continue
		}
		if got, err := tpl.Expand(tplValues); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseTemplate(%q).Expand: got %q, %v, want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseTemplateErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"srv --port {prot}", `unknown placeholder {prot} at column 12 (known: {port} {bind} {data} {memory} {page} {segment} {index} {backend} {password_file})`},
		{"srv --dir '{data}' --x {Data}", "unknown placeholder {Data} at column 24"},
		{"srv 'open", "the ' at column 5 is never closed"},
		{`srv "open`, `the " at column 5 is never closed`},
		{`srv x\`, "a backslash at its end escapes nothing"},
		{"", "has no program to run"},
		{"   \t", "has no program to run"},
	} {
		_, err := ParseTemplate(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTemplate(%q): got error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

// TestEmptyExpansion: an unquoted word that expands to nothing goes, as
// in a shell; a quoted one stays as an empty argument.
func TestEmptyExpansion(t *testing.T) {
	tpl, err := ParseTemplate(`srv {backend} "{backend}" --port {port}`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tpl.Expand(Values{Port: 1})
	if want := []string{"srv", "", "--port", "1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if !tpl.Uses("backend") || tpl.Uses("data") {
		t.Errorf("Uses: got backend %v data %v, want true false", tpl.Uses("backend"), tpl.Uses("data"))
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"redis-server", "--port", "7001"}, "redis-server --port 7001"},
		{[]string{"srv", "--save", ""}, "srv --save ''"},
		{[]string{"srv", "a b", "it's"}, `srv 'a b' 'it'\''s'`},
		{[]string{"/opt/g/GarnetServer.dll", "--bind=127.0.0.1,::1"}, "/opt/g/GarnetServer.dll --bind=127.0.0.1,::1"},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q): got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCustom(t *testing.T) {
	s, err := Custom("/usr/local/bin/my-srv --port {port} --dir {data} --backend {backend}")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := s.Program("")
	if err == nil || !strings.Contains(err.Error(), "--server-cmd: its program /usr/local/bin/my-srv") {
		t.Errorf("Program: got %q, %v; want an error: /usr/local/bin/my-srv is not there", prog, err)
	}
	if _, err := s.Program("/x/srv"); err == nil || !strings.Contains(err.Error(), "the template's first word, /usr/local/bin/my-srv, is its program") {
		t.Errorf("Program(--server-bin): got %v, want a refusal", err)
	}
	for _, sc := range []string{"storage", "memory", "localmemory"} {
		got, err := s.Process(sc, []string{"/usr/local/bin/my-srv"}, tplValues)
		want := []string{"/usr/local/bin/my-srv", "--port", "7001", "--dir", "/var/tmp/my data", "--backend", "uring"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %q, %v; want %q", sc, got, err, want)
		}
	}
	ep, args, err := s.Container("memory", tplValues)
	if err != nil || !slices.Equal(ep, []string{"/usr/local/bin/my-srv"}) || len(args) != 6 {
		t.Errorf("Container: got %q %q, %v; want the program as entrypoint and its six flags", ep, args, err)
	}
	if s.Password != PasswordNone || !strings.Contains(s.NoPassword, "{password_file}") {
		t.Errorf("a template without {password_file}: got password form %d, %q; want none, saying to give {password_file}", s.Password, s.NoPassword)
	}
	// {password_file} makes the run's password file the template's: the
	// word stands where the template puts it, and Args adds nothing.
	pw, err := Custom("my-srv --port {port} --requirepass-file {password_file}")
	if err != nil || pw.Password != PasswordPlaceholder || pw.NoPassword != "" {
		t.Fatalf("a template with {password_file}: got %v, form %d, %q; want PasswordPlaceholder", err, pw.Password, pw.NoPassword)
	}
	v := tplValues
	v.PasswordFile = "/run/tierbench/run-1/password"
	got, err := pw.Process("memory", []string{"my-srv"}, v)
	if want := []string{"my-srv", "--port", "7001", "--requirepass-file", "/run/tierbench/run-1/password"}; err != nil || !slices.Equal(pw.Password.Args(got, v.PasswordFile), want) {
		t.Errorf("{password_file}: got %q, %v; want %q", got, err, want)
	}
	if got, err := pw.Process("memory", []string{"my-srv"}, tplValues); err == nil {
		t.Errorf("{password_file} with no file: got %q, want a refusal", got)
	}
	if b, err := PasswordPlaceholder.File("s3cret"); err != nil || string(b) != "s3cret\n" {
		t.Errorf("PasswordPlaceholder.File: got %q, %v; want the password and a newline", b, err)
	}
	for _, c := range []struct{ in, want string }{
		{"{data}/srv --port {port}", "the program, its first word, may not hold a placeholder"},
		{"srv --dir {data}", "has no {port}: the run picks each server's port"},
		{"srv --port {porrt}", "unknown placeholder {porrt}"},
	} {
		if _, err := Custom(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Custom(%q): got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
