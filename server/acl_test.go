package server

import (
	"strings"
	"testing"
)

// TestUserRules: the rules a benchmark needs are taken, every other is
// refused with an error naming it.
func TestUserRules(t *testing.T) {
	for _, tc := range []struct {
		rules   []string
		auth    string
		wantErr string // "" for none
	}{
		{[]string{"alice on >secret ~* &* +@all"}, "", ""},
		{[]string{"alice on nopass allkeys allchannels allcommands"}, "pw", ""},
		{[]string{"bob off ~* +@all"}, "", ""},
		{[]string{"default on >pw ~* +@all"}, "", ""},
		{[]string{"alice on #" + sha256Hex("x") + " ~* +@all"}, "", ""},
		{[]string{"alice on >secret ~foo:* +@all"}, "", `rule "~foo:*" is not supported`},
		{[]string{"alice on >secret ~* +get"}, "", `rule "+get" is not supported`},
		{[]string{"alice on >secret ~* +@all -@dangerous"}, "", `rule "-@dangerous" is not supported`},
		{[]string{"alice on >secret ~* +@all reset"}, "", `rule "reset" is not supported`},
		{[]string{"alice on >secret ~* +@all (~x +get)"}, "", `rule "(~x" is not supported`},
		{[]string{"alice on #abc ~* +@all"}, "", `rule "#abc": want # and the 64 hex digits`},
		{[]string{"alice on >secret +@all"}, "", "add ~* and +@all"},
		{[]string{"alice on >secret ~*"}, "", "add ~* and +@all"},
		{[]string{"alice on ~* +@all"}, "", "could never authenticate"},
		{[]string{""}, "", "want a name and rules"},
		{[]string{"alice on nopass ~* +@all", "alice off ~* +@all"}, "", `user "alice" is given twice`},
		{[]string{"default on >x ~* +@all"}, "pw", "given by both"},
	} {
		_, err := newUserTable(tc.auth, tc.rules)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: got %v, want no error", tc.rules, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: got %v, want an error with %q", tc.rules, err, tc.wantErr)
		}
	}
}

// TestUserCheck: who a user and password authenticate as.
func TestUserCheck(t *testing.T) {
	users, err := newUserTable("dflt", []string{"alice on >a1 >a2 ~* +@all", "bob off >b ~* +@all", "carol on nopass ~* +@all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pass string // user "-": none (AUTH password)
		want       string // "" for refused
	}{
		{"-", "dflt", "default"},
		{"default", "dflt", "default"},
		{"-", "a1", ""},
		{"alice", "a1", "alice"},
		{"alice", "a2", "alice"},
		{"alice", "a3", ""},
		{"alice", "", ""},
		{"Alice", "a1", ""},
		{"bob", "b", ""},
		{"carol", "anything", "carol"},
		{"nobody", "dflt", ""},
	} {
		var name []byte
		if tc.user != "-" {
			name = []byte(tc.user)
		}
		got := ""
		if u := users.check(name, []byte(tc.pass)); u != nil {
			got = u.name
		}
		if got != tc.want {
			t.Errorf("check(%q, %q): got user %q, want %q", tc.user, tc.pass, got, tc.want)
		}
	}
	if u := users.startUser(); u != nil {
		t.Errorf("start user with a default password: got %q, want none", u.name)
	}
}
