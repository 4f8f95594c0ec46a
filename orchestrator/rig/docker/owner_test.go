package docker

import (
	"errors"
	"strings"
	"testing"
)

// TestOwnerOf: a container's user, as the engine records it, gives the
// owner of the files copied in: root for none, the numbers as given, a
// name looked up in the image's /etc/passwd (read only then), its group
// the user's own unless a number is given; a name the image does not
// list, or an image without a passwd file, is an error naming the user.
func TestOwnerOf(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\napp:x:1654:1654::/home/app:/bin/sh\ndfly:x:999:998::/data:/bin/false\n"
	for _, c := range []struct {
		user     string
		passwd   string // "" : no passwd file
		uid, gid int
		err      string
	}{
		{"", "", 0, 0, ""},
		{"0", "", 0, 0, ""},
		{"1654", "", 1654, 0, ""},
		{"4242:4243", "", 4242, 4243, ""},
		{"app", passwd, 1654, 1654, ""},
		{"dfly:7", passwd, 999, 7, ""},
		{"dfly:staff", passwd, 999, 998, ""},
		{"root", passwd, 0, 0, ""},
		{"nobody", passwd, 0, 0, `user "nobody", whom its /etc/passwd does not list`},
		{"app", "", 0, 0, `user "app": read its /etc/passwd`},
	} {
		read := false
		uid, gid, err := ownerOf(c.user, func() ([]byte, error) {
			read = true
			if c.passwd == "" {
				return nil, errors.New("no such file")
			}
			return []byte(c.passwd), nil
		})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ownerOf(%q): got %d:%d, %v; want an error containing %q", c.user, uid, gid, err, c.err)
			}
			continue
		}
		if err != nil || uid != c.uid || gid != c.gid {
			t.Errorf("ownerOf(%q): got %d:%d, %v; want %d:%d", c.user, uid, gid, err, c.uid, c.gid)
		}
		if numeric := c.user == "" || strings.Trim(strings.SplitN(c.user, ":", 2)[0], "0123456789") == ""; read == numeric {
			t.Errorf("ownerOf(%q): read the passwd file %v, want it read only for a name", c.user, read)
		}
	}
}
