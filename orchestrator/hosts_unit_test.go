package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
)

func TestParseEndpoint(t *testing.T) {
	dir := t.TempDir()
	// A context as the Docker CLI writes it, with TLS material.
	sum := sha256.Sum256([]byte("lab"))
	id := hex.EncodeToString(sum[:])
	os.MkdirAll(filepath.Join(dir, "meta", id), 0o755)
	os.WriteFile(filepath.Join(dir, "meta", id, "meta.json"), []byte(`{"Name":"lab","Endpoints":{"docker":{"Host":"tcp://10.0.0.9:2376","SkipTLSVerify":false}}}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "tls", id, "docker"), 0o755)
	os.WriteFile(filepath.Join(dir, "tls", id, "docker", "ca.pem"), []byte("x"), 0o644)

	for _, tc := range []struct {
		in, name, host, tlsDir string
		bad                    bool
	}{
		{in: "unix:///run/tbdocker-b/docker.sock", name: "tbdocker-b", host: "unix:///run/tbdocker-b/docker.sock"},
		{in: "b=unix:///run/x/docker.sock", name: "b", host: "unix:///run/x/docker.sock"},
		{in: "tcp://10.231.0.2:2375", name: "10.231.0.2", host: "tcp://10.231.0.2:2375"},
		{in: "ssh://bench@client1.example:2222", name: "client1.example", host: "ssh://bench@client1.example:2222"},
		{in: "lab", name: "lab", host: "tcp://10.0.0.9:2376", tlsDir: filepath.Join(dir, "tls", id, "docker")},
		{in: "srv=lab", name: "srv", host: "tcp://10.0.0.9:2376", tlsDir: filepath.Join(dir, "tls", id, "docker")},
		{in: "nosuchcontext", bad: true},
		{in: "http://10.0.0.1:2375", bad: true},
		{in: "unix://", bad: true},
		{in: "tcp://:2375", bad: true},
		{in: "a b=tcp://h:1", bad: true},
		{in: "", bad: true},
	} {
		got, err := docker.ParseEndpoint(tc.in, dir)
		if tc.bad {
			if err == nil || !errors.Is(err, fault.ErrConfig) {
				t.Errorf("ParseEndpoint(%q): got %+v, %v; want an ErrConfig error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.Name != tc.name || got.Host != tc.host || got.TLSDir != tc.tlsDir {
			t.Errorf("ParseEndpoint(%q): got name %q host %q tls %q, %v; want %q %q %q", tc.in, got.Name, got.Host, got.TLSDir, err, tc.name, tc.host, tc.tlsDir)
		}
	}
}

func TestParseEndpointsNamesApart(t *testing.T) {
	got, err := docker.ParseEndpoints("tcp://h:1, tcp://h:2,tcp://h:3", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := []string{"h", "h-2", "h-3"}; !slices.Equal(names, want) {
		t.Errorf("names: got %q, want %q", names, want)
	}
	if _, err := docker.ParseEndpoints(" , ", ""); !errors.Is(err, fault.ErrConfig) {
		t.Errorf("empty list: got %v, want ErrConfig", err)
	}
}

func TestSSHArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"ssh://host", []string{"-T", "-o", "BatchMode=yes", "--", "host", "docker", "system", "dial-stdio"}},
		{"ssh://me@host:2200", []string{"-l", "me", "-p", "2200", "-T", "-o", "BatchMode=yes", "--", "host", "docker", "system", "dial-stdio"}},
	} {
		got, err := docker.SshArgs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("sshArgs(%q): got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := docker.SshArgs("ssh://host/path"); err == nil {
		t.Errorf("sshArgs with a path: got no error")
	}
}

func TestProbeArgs(t *testing.T) {
	for _, tc := range []struct {
		req  rig.ProbeRequest
		want string
	}{
		{rig.ProbeRequest{PID: 1}, "hostprobe --pid 1"},
		{rig.ProbeRequest{Addr: "10.0.0.1:6379", Auth: "pw", Command: []string{"INFO", "store"}}, "hostprobe --addr 10.0.0.1:6379 --auth-file /tierbench-auth --resp INFO store"},
		{rig.ProbeRequest{Addr: "a:1", Prove: true, PID: 1}, "hostprobe --pid 1 --addr a:1 --prove"},
		{rig.ProbeRequest{Addr: "a:1", Auth: "pw", TLSDir: rig.ContainerTLSDir, Witness: true}, "hostprobe --addr a:1 --auth-file /tierbench-auth --tls-dir /tierbench-tls --witness"},
		{rig.ProbeRequest{PID: 1, TLSDir: rig.ContainerTLSDir}, "hostprobe --pid 1"},
		{rig.ProbeRequest{Addr: "a:1", Sample: &rig.SampleRequest{DBSize: 10, KeyLength: 16, ValueLength: 96}}, "hostprobe --addr a:1 --sample 10,16,96"},
		{rig.ProbeRequest{RouteTo: "10.0.0.2", FreeOn: "0.0.0.0", Addrs: true}, "hostprobe --addrs --route-to 10.0.0.2 --free-port-on 0.0.0.0"},
		{rig.ProbeRequest{DataDisks: "/data", DiskStats: []string{"vda", "vdb"}, Auth: "never without --addr"}, "hostprobe --data-disks /data --diskstats vda,vdb"},
	} {
		if got := strings.Join(rig.ProbeArgs(tc.req), " "); got != tc.want {
			t.Errorf("probeArgs(%+v): got %q, want %q", tc.req, got, tc.want)
		}
	}
}

// FuzzParseProbe: hostprobe's output comes from a container on another
// host; any bytes give an answer or an error, never a panic.
func FuzzParseProbe(f *testing.F) {
	for _, seed := range []string{
		`{"read_bytes":33345536,"placement":{"cpus":"0-1","mems":"0"},"cpu_ticks":12}`,
		`warning first` + "\n" + `{"witness":{"keys":5,"store":{"Log.HeadAddress":"64"},"info":{"name":"tierbench"}}}`,
		`{"diskstats":{"Time":"2026-12-01T10:00:00Z","Devices":["vda"],"ReadsCompleted":3}}`,
		`{"reply":7}`, `{`, ``, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := rig.ParseProbe(b)
		if err != nil {
			return
		}
		// What parses survives its own encoding unchanged.
		once, _ := json.Marshal(a)
		again, err := rig.ParseProbe(once)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", once, err)
		}
		if twice, _ := json.Marshal(again); string(twice) != string(once) {
			t.Errorf("round trip: %s became %s", once, twice)
		}
	})
}
