package fleet

import (
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/results"
)

// TestNote: a progress line names the client hosts with their share of
// a step's connections (none for a host without one), the server's
// host, and the load's one client host.
func TestNote(t *testing.T) {
	a := &docker.Driver{Endpoint: docker.Endpoint{Name: "a"}}
	b := &docker.Driver{Endpoint: docker.Endpoint{Name: "b"}}
	f := NewHosts(Env{}, &docker.HostsDriver{Server: a, Clients: []*docker.Driver{b, a}})
	for _, tc := range []struct {
		threads int
		want    string
	}{
		{0, " from host b"},
		{1, " (server on host a, clients b×1)"},
		{5, " (server on host a, clients b×3 a×2)"},
	} {
		if got := f.Note(tc.threads); got != tc.want {
			t.Errorf("Note(%d): got %q, want %q", tc.threads, got, tc.want)
		}
	}
	if got := (Local{}).Note(8); got != "" {
		t.Errorf("Local.Note: got %q, want nothing", got)
	}
}

// TestBind: the servers listen where Open chose across hosts, on
// loopback on one machine.
func TestBind(t *testing.T) {
	for _, tc := range []struct {
		hp   *results.HostsPlan
		want string
	}{
		{nil, "127.0.0.1"},
		{&results.HostsPlan{Bind: "10.0.0.5", Port: 7000}, "10.0.0.5"},
		{&results.HostsPlan{Bind: "127.0.0.1"}, "127.0.0.1"},
	} {
		if got := Bind(tc.hp); got != tc.want {
			t.Errorf("Bind(%+v): got %q, want %q", tc.hp, got, tc.want)
		}
	}
}
