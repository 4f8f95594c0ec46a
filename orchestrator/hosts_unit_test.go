package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
		got, err := ParseEndpoint(tc.in, dir)
		if tc.bad {
			if err == nil || !errors.Is(err, ErrConfig) {
				t.Errorf("ParseEndpoint(%q): got %+v, %v; want an ErrConfig error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.Name != tc.name || got.Host != tc.host || got.tlsDir != tc.tlsDir {
			t.Errorf("ParseEndpoint(%q): got name %q host %q tls %q, %v; want %q %q %q", tc.in, got.Name, got.Host, got.tlsDir, err, tc.name, tc.host, tc.tlsDir)
		}
	}
}

func TestParseEndpointsNamesApart(t *testing.T) {
	got, err := ParseEndpoints("tcp://h:1, tcp://h:2,tcp://h:3", t.TempDir())
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
	if _, err := ParseEndpoints(" , ", ""); !errors.Is(err, ErrConfig) {
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
		got, err := sshArgs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("sshArgs(%q): got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := sshArgs("ssh://host/path"); err == nil {
		t.Errorf("sshArgs with a path: got no error")
	}
}
