package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
)

// labelledContainers lists the containers on an engine that carry the
// tierbench run label, whatever their run.
func labelledContainers(t *testing.T, cli *client.Client) []string {
	t.Helper()
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", docker.LabelRun)})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	var names []string
	for _, c := range res.Items {
		names = append(names, docker.FirstName(c.Names)+" "+string(c.State))
	}
	return names
}

// TestHostsHarness proves the two-host harness: the FROM-scratch image is
// built through the API on each engine, a server container on host A
// listens on A's veth address, and a bench container on host B drives it
// across the veth; B's engine also answers on TCP from inside A. When the
// hosts are torn down, nothing of them is left.
func TestHostsHarness(t *testing.T) {
	bin := testenv.MustBinary(t)
	var made []*testenv.Host
	t.Run("across the veth", func(t *testing.T) {
		hosts := testenv.MustHosts(t, 2, testenv.HostsOptions{TCP: []int{1}})
		made = hosts
		a, b := hosts[0], hosts[1]
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		runID := "harness-" + a.NetNS
		drv := map[string]*docker.Driver{}
		for _, h := range hosts {
			ep, err := docker.ParseEndpoint(h.Name+"="+h.Socket, "")
			if err != nil {
				t.Fatal(err)
			}
			d, err := docker.NewDriver(ctx, ep, bin, runID)
			if err != nil {
				t.Fatalf("host %s: %v", h.Name, err)
			}
			t.Cleanup(func() { d.Close(context.Background()) })
			drv[h.Name] = d
		}
		logs := t.TempDir()
		id, err := drv["a"].Create(ctx, "server", "harness", []string{"server", "--port", "6379", "--bind", a.Addr},
			"", "", false, nil, filepath.Join(logs, "server.log"))
		if err != nil {
			t.Fatalf("server on host a: %v", err)
		}
		args := []string{"bench", "--host", a.Addr, "--port", "6379", "--dbsize", "20000", "-t", "2", "-b", "64", "--runtime", "1", "--json"}
		var out []byte
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, _, err = drv["b"].RunClient(ctx, rig.ClientSpec{Name: "harness", Args: args, LogPath: filepath.Join(logs, "client.log")})
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond) // the server may still be starting
		}
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(logs, "client.log"))
			t.Fatalf("bench on host b against %s: %v\n%s", a.Addr, err, log)
		}
		rep, err := rig.ParseBench(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Cells) != 1 || rep.Cells[0].Hits == 0 || rep.Cells[0].Misses != 0 || rep.Load == nil || rep.Load.Acknowledged != 20000 {
			t.Errorf("bench from host b: got %+v load %+v, want one cell with hits, no misses, 20000 keys loaded", rep.Cells, rep.Load)
		}
		if err := drv["a"].Remove(ctx, id); err != nil {
			t.Fatal(err)
		}
		for _, h := range hosts {
			if left := labelledContainers(t, h.Client(t)); len(left) != 0 {
				t.Errorf("host %s: containers left: %q", h.Name, left)
			}
		}
		// ssh://: the connection helper runs `ssh … docker system
		// dial-stdio`; an ssh on PATH that checks its arguments and runs
		// the real dial-stdio against B's socket stands in for sshd.
		shim := t.TempDir()
		script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(shim, "args") + "\nexec docker -H " + b.Socket + " system dial-stdio\n"
		if err := os.WriteFile(filepath.Join(shim, "ssh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", shim+":"+os.Getenv("PATH"))
		ep, err := docker.ParseEndpoint("ssh://tester@host-b:2222", "")
		if err != nil {
			t.Fatal(err)
		}
		d, err := docker.NewDriver(ctx, ep, bin, runID)
		if err != nil {
			t.Fatalf("engine of host b over ssh://: %v", err)
		}
		if d.Image != drv["b"].Image {
			t.Errorf("over ssh:// the image is %s, want host b's %s", d.Image, drv["b"].Image)
		}
		d.Close(context.Background())
		if got, _ := os.ReadFile(filepath.Join(shim, "args")); strings.TrimSpace(string(got)) != "-l tester -p 2222 -T -o BatchMode=yes -- host-b docker system dial-stdio" {
			t.Errorf("ssh was run with %q, want the dial-stdio of host-b as tester on port 2222", got)
		}

		// B's engine on TCP, from inside A's namespace (the docker CLI).
		cmd := a.Nsenter("docker", "-H", b.TCP, "version", "--format", "{{.Server.Version}}")
		got, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) == "" {
			t.Errorf("docker -H %s version from host a: %v: %s", b.TCP, err, got)
		}
	})
	if len(made) == 0 {
		return // skipped
	}
	list, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	for _, h := range made {
		if strings.Contains(string(list), h.NetNS) {
			t.Errorf("namespace %s left after teardown: %s", h.NetNS, list)
		}
		if _, err := os.Stat(filepath.Dir(strings.TrimPrefix(h.Socket, "unix://"))); err == nil {
			t.Errorf("engine directory of host %s left after teardown", h.Name)
		}
	}
}
