package sut

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// What Garnet reads, from its source (microsoft/garnet, read at commit
// e508a41, none of it copied here): libs/host/Configuration/Options.cs
// names the option --config-import-path, whose file's format defaults to
// GarnetConf, and the properties AuthenticationMode (enum
// GarnetAuthenticationMode, whose member Password is the single-password
// mode) and Password; libs/host/defaults.conf spells the two keys so;
// ConfigProviders.cs reads a GarnetConf file as JSON, enums by their
// names (JsonStringEnumConverter); PopulateObjectJsonConverter.cs sets
// each key of the object by looking it up as a property name, which is
// case-sensitive; PasswordAuthenticationSettings.cs turns the password
// into bytes as ASCII. So the file is one JSON object with exactly these
// keys, spelled so, and these values.
var garnetKeys = []string{"AuthenticationMode", "Password"}

// garnetConfObject decodes b as Garnet would: one JSON object, its keys
// in the order written (a key given twice is listed twice: Garnet sets
// each in turn, the last winning) and their string values.
func garnetConfObject(t *testing.T, b []byte) ([]string, map[string]string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%q: got %v, %v; want a JSON object", b, tok, err)
	}
	var keys []string
	values := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			t.Fatalf("%q: a key: got %v, %v", b, tok, err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: the value of %s: %v", b, key, err)
		}
		s, ok := v.(string)
		if !ok {
			t.Fatalf("%q: the value of %s: got %T %v, want a string", b, key, v, v)
		}
		keys, values[key] = append(keys, key), s
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		t.Fatalf("%q: got %v, %v; want the object's end", b, tok, err)
	}
	if _, err := dec.Token(); err == nil {
		t.Fatalf("%q: something follows the object", b)
	}
	return keys, values
}

func checkGarnetConf(t *testing.T, pw string) {
	t.Helper()
	b, err := PasswordConfigImport.File(pw)
	if err != nil {
		t.Fatalf("File(%q): %v", pw, err)
	}
	if !json.Valid(b) || strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("File(%q) = %q, want one line of valid JSON", pw, b)
	}
	keys, values := garnetConfObject(t, b)
	if !slices.Equal(keys, garnetKeys) || values["AuthenticationMode"] != "Password" || values["Password"] != pw {
		t.Fatalf("File(%q) = %q: got keys %q, values %q; want exactly %q, AuthenticationMode Password and Password the password",
			pw, b, keys, values, garnetKeys)
	}
}

// TestGarnetConfHoldsThePassword: the garnet.conf the run writes for
// Garnet is one JSON object setting exactly AuthenticationMode to
// Password and Password to the password, whatever the password holds (a
// quote, a backslash, a line break, a NUL, what would close the object);
// a password Garnet would read otherwise (a byte past ASCII) or none is
// refused; Garnet's catalogue entry takes it with --config-import-path.
func TestGarnetConfHoldsThePassword(t *testing.T) {
	for _, pw := range append(slices.Clone(hostile), `"}`, `","Password":"x`, "</script>&", "0123456789abcdef0123456789abcdef") {
		if !isASCII(pw) {
			continue
		}
		checkGarnetConf(t, pw)
	}
	for _, pw := range []string{"", "\xff\xfe", "pässword", "\u2028"} {
		if b, err := PasswordConfigImport.File(pw); err == nil {
			t.Errorf("File(%q) = %q, want it refused", pw, b)
		}
	}
	g, err := Lookup("garnet")
	if err != nil {
		t.Fatal(err)
	}
	if g.Password != PasswordConfigImport || g.NoPassword != "" {
		t.Errorf("garnet: got Password %d (%q), want PasswordConfigImport", g.Password, g.NoPassword)
	}
	if got, want := g.Password.Args([]string{"--port", "1"}, "F"), []string{"--port", "1", "--config-import-path", "F"}; !slices.Equal(got, want) {
		t.Errorf("garnet's flags: got %q, want %q", got, want)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// FuzzGarnetConf: every password is either refused (empty, or a byte past
// ASCII) or written as exactly the two keys with the password as it is.
func FuzzGarnetConf(f *testing.F) {
	for _, pw := range hostile {
		f.Add(pw)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		if pw == "" || !isASCII(pw) {
			if b, err := PasswordConfigImport.File(pw); err == nil {
				t.Fatalf("File(%q) = %q, want it refused", pw, b)
			}
			return
		}
		checkGarnetConf(t, pw)
	})
}
