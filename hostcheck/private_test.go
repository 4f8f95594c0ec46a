package hostcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDefaultDataDirIsTheUsers: the preflight's default directory is in
// one named for the user, and the directories prepareDataDir makes above
// a missing data dir are 0700 (before, /var/tmp/tierbench was shared by
// every user, and whoever made it first owned it).
func TestDefaultDataDirIsTheUsers(t *testing.T) {
	if want := fmt.Sprintf("/var/tmp/tierbench-%d/preflight", os.Geteuid()); DefaultDataDir != want {
		t.Errorf("DefaultDataDir = %s, want %s", DefaultDataDir, want)
	}
	parent := filepath.Join(t.TempDir(), "tierbench-u")
	if _, _, _, err := prepareDataDir(filepath.Join(parent, "preflight")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(parent); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the new parent of the data dir: got %v, %v, want mode 0700", st.Mode().Perm(), err)
	}
}
