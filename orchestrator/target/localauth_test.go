package target

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/sut"
)

// TestServerPasswordFiles: under the process runtime the run writes one
// password file per way its servers take one, each a regular 0600 file
// in a 0700 secret dir of the state dir, never through a link planted
// where it goes (the link is replaced, its target untouched); each
// server's flags name its file where it reads it, and a server with no
// way off argv gets none.
func TestServerPasswordFiles(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	secrets := &Secrets{StateDir: state, RunID: "r1"}
	drv := process.NewDriver("", nil)
	p := Password{Auth: "0123456789abcdef0123456789abcdef"}
	var err error
	if p.File, err = secrets.WritePassword(p.Auth); err != nil {
		t.Fatal(err)
	}
	// Another process plants a link where the config file goes, to a
	// file the run must not write.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("untouched"), 0o644)
	if err := os.Symlink(victim, filepath.Join(secrets.Dir, sut.PasswordConfigFile.FileName())); err != nil {
		t.Fatal(err)
	}
	servers := make([]sut.Server, 0, len(sut.Catalogue))
	for _, name := range sut.Names() {
		s, _ := sut.Lookup(name)
		servers = append(servers, s)
	}
	if err := p.writeServerPasswords(servers, drv, secrets); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the link's target: got %q, want it untouched", b)
	}
	if st, err := os.Lstat(secrets.Dir); err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
		t.Errorf("the secret dir %s: got %v, %v; want a 0700 directory", secrets.Dir, st.Mode(), err)
	}
	for _, c := range []struct {
		name      string
		wantFirst bool   // the file is the first argument
		wantFlag  string // else the flag before it ("" : no file at all)
		wantText  string
	}{
		{"tierbench", false, "--auth-file", p.Auth + "\n"},
		{"redis", true, "", `requirepass "` + p.Auth + "\"\n"},
		{"valkey", true, "", `requirepass "` + p.Auth + "\"\n"},
		{"keydb", true, "", `requirepass "` + p.Auth + "\"\n"},
		{"dragonfly", false, "--flagfile", "--requirepass=" + p.Auth + "\n"},
		{"garnet", false, "--config-import-path", `{"AuthenticationMode":"Password","Password":"` + p.Auth + "\"}\n"},
		{sut.CustomName, false, "", ""},
	} {
		s, _ := sut.Lookup(c.name)
		if c.name == sut.CustomName {
			s, _ = sut.Custom("srv --port {port}")
		}
		args, auth := p.serverPassword(s, []string{"--port", "1"})
		var file string
		switch {
		case c.wantFirst:
			file = args[0]
		case c.wantFlag != "" && len(args) == 4 && args[2] == c.wantFlag:
			file = args[3]
		}
		if c.wantText == "" {
			if auth || !slices.Equal(args, []string{"--port", "1"}) {
				t.Errorf("%s: got %q (auth %v), want its flags alone and no password", c.name, args, auth)
			}
			continue
		}
		if !auth || file == "" || !strings.HasPrefix(file, secrets.Dir+"/") {
			t.Errorf("%s: got %q (auth %v), want a file of %s %s", c.name, args, auth, secrets.Dir, map[bool]string{true: "first", false: "after " + c.wantFlag}[c.wantFirst])
			continue
		}
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %s: got %v, %v; want a regular 0600 file", c.name, file, st.Mode(), err)
		}
		if b, _ := os.ReadFile(file); string(b) != c.wantText {
			t.Errorf("%s: %s holds %q, want %q", c.name, file, b, c.wantText)
		}
	}
}
