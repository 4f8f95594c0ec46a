package server

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadPrivateFile: a private regular file is read; a link, a FIFO, a
// directory and a file others may read or write are refused with the
// reason and the fix, and the FIFO does not hang the open.
func TestReadPrivateFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	private := write("private", "pw\n", 0o600)
	readOnly := write("readonly", "pw\n", 0o400)
	groupRead := write("group-read", "pw\n", 0o640)
	otherWrite := write("other-write", "pw\n", 0o602)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := write("big", strings.Repeat("x", maxSecretFileBytes+1), 0o600)
	for _, tc := range []struct {
		name, path string
		want       string // content, when wantErr is ""
		wantErr    string
	}{
		{"private", private, "pw\n", ""},
		{"read only", readOnly, "pw\n", ""},
		{"group may read", groupRead, "", "run chmod go-rwx " + groupRead},
		{"others may write", otherWrite, "", "mode 0602"},
		{"symbolic link", link, "", "is a symbolic link"},
		{"fifo", fifo, "", "is not a regular file"},
		{"directory", dir, "", "is not a regular file"},
		{"missing", filepath.Join(dir, "missing"), "", "no such file"},
		{"too big", big, "", "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var got []byte
			var err error
			go func() {
				got, err = ReadPrivateFile(tc.path)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("ReadPrivateFile(%s) still blocked after 10 s", tc.path)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case tc.wantErr == "" && string(got) != tc.want:
				t.Fatalf("got %q, want %q", got, tc.want)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

// TestReadPasswordFile: the first line, without its line ending.
func TestReadPasswordFile(t *testing.T) {
	for _, tc := range []struct {
		content, want, wantErr string
	}{
		{"s3cret\n", "s3cret", ""},
		{"s3cret", "s3cret", ""},
		{"s3cret\r\n", "s3cret", ""},
		{"with space\nsecond line\n", "with space", ""},
		{"\nsecond\n", "", "first line is empty"},
		{"", "", "first line is empty"},
	} {
		p := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadPasswordFile(p)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%q: got %q, %v, want %q", tc.content, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: got %q, %v, want an error with %q", tc.content, got, err, tc.wantErr)
		}
	}
}

// TestParseACLFile: Redis's aclfile lines, and the errors, with their line.
func TestParseACLFile(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
		wantErr    string
	}{
		{"two users", "user alice on >a ~* &* +@all\nuser bob on #" + sha256Hex("b") + " ~* +@all\n",
			[]string{"alice on >a ~* &* +@all", "bob on #" + sha256Hex("b") + " ~* +@all"}, ""},
		{"blank lines, tabs, CRLF", "\n  \nuser\talice  on >a ~* +@all\r\n\n",
			[]string{"alice on >a ~* +@all"}, ""},
		{"as ACL SAVE writes it", "user default on nopass sanitize-payload ~* &* +@all\n",
			[]string{"default on nopass sanitize-payload ~* &* +@all"}, ""},
		{"default off", "user default off\nuser alice on >a ~* +@all\n",
			[]string{"default off", "alice on >a ~* +@all"}, ""},
		{"empty", "", nil, ""},
		{"comment", "# users\nuser alice on >a ~* +@all\n", nil, "1: want \"user NAME RULE...\""},
		{"no user keyword", "user alice on >a ~* +@all\nalice on >a ~* +@all\n", nil, "2: want \"user NAME RULE...\""},
		{"name only keyword", "user\n", nil, "1: want \"user NAME RULE...\""},
		{"unsupported rule", "\nuser alice on >a ~app:* +@all\n", nil, `2: user alice: rule "~app:*" is not supported`},
		{"duplicate", "user alice on >a ~* +@all\nuser bob off\nuser alice on >b ~* +@all\n", nil, "3: user alice is given on line 1 too"},
		{"on without commands", "user alice on >a ~*\n", nil, "1: user alice: tierbench users run every command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseACLFile([]byte(tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr[:strings.Index(tc.wantErr, ":")+1]) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLoadACLFileNamesFileAndLine: errors point at path:line, and the file
// must be private.
func TestLoadACLFileNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(p, []byte("user alice on >a ~* +@all\nuser bob on >b ~* +get\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadACLFile(p); err == nil || !strings.HasPrefix(err.Error(), p+":2: ") {
		t.Errorf("got %v, want an error beginning %q", err, p+":2: ")
	}
	os.WriteFile(p, []byte("user alice on >a ~* +@all\n"), 0o600)
	os.Chmod(p, 0o644)
	if _, err := LoadACLFile(p); err == nil || !strings.Contains(err.Error(), "chmod go-rwx") {
		t.Errorf("mode 0644: got %v, want a chmod error", err)
	}
}

// FuzzParseACLFile: no bytes crash the parser, and every user it accepts
// is one the server starts with.
func FuzzParseACLFile(f *testing.F) {
	for _, s := range []string{
		"user alice on >a ~* &* +@all\n",
		"user default off\n\nuser bob on nopass allkeys allcommands\r\n",
		"user x on #" + sha256Hex("x") + " ~* +@all",
		"# comment\n",
		"user alice on >a ~* +@all\nuser alice off\n",
		"user \x00 on > ~* +@all",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		users, err := ParseACLFile(data)
		if err != nil {
			return
		}
		if _, err := newUserTable("", users); err != nil {
			t.Fatalf("ParseACLFile accepted %q, but the server refuses its users: %v", data, err)
		}
	})
}
