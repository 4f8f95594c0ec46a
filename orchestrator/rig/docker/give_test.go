package docker

import (
	"maps"
	"slices"
	"testing"
)

// TestGiveAdds: files given later are copied in beside those given before
// (a server's password file and the run's TLS files, given apart), a name
// given again taking the later content.
func TestGiveAdds(t *testing.T) {
	d := &Driver{}
	d.Give(map[string][]byte{"requirepass.conf": []byte("a")})
	d.Give(map[string][]byte{"ca.pem": []byte("b"), "server.key": []byte("c")})
	d.Give(map[string][]byte{"requirepass.conf": []byte("d")})
	if got, want := slices.Sorted(maps.Keys(d.secrets)), []string{"ca.pem", "requirepass.conf", "server.key"}; !slices.Equal(got, want) {
		t.Fatalf("files given: got %q, want %q", got, want)
	}
	if got := string(d.secrets["requirepass.conf"]); got != "d" {
		t.Errorf("requirepass.conf: got %q, want the later %q", got, "d")
	}
}
