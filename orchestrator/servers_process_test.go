package orchestrator

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// TestProcessRuntimeStartsAForeignTree: the process runtime starts a
// server that is not tierbench through a launcher that forks it and keeps
// running, deaf to SIGTERM, the server in a session of its own (the worst
// of dotnet and a daemonizing script): pinned, the server runs on the CPUs
// and node asked for (through the pinning tierbench, envPinExec); the
// listening process found is the server below the launcher, listed in
// the pid file; stop leaves nothing of the tree and nothing listening.
func TestProcessRuntimeStartsAForeignTree(t *testing.T) {
	bin := testenv.MustBinary(t)
	redis := testenv.MustLookPath(t, "redis-server")
	for _, c := range []struct {
		name       string
		cpus, mems string
	}{{"pinned", "1", "0"}, {"not pinned", "", ""}} {
		t.Run(c.name, func(t *testing.T) {
			pids, err := safe.NewPIDFile(t.TempDir(), "foreign-"+strings.ReplaceAll(c.name, " ", "-"))
			if err != nil {
				t.Fatal(err)
			}
			defer pids.Close()
			d := process.NewDriver(bin, pids)
			defer d.Close(context.Background())
			port := testenv.FreePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			script := fmt.Sprintf("trap '' TERM; setsid %s --port %d --bind 127.0.0.1 --save '' --appendonly no --dir %s & while :; do sleep 1; done", redis, port, t.TempDir())
			srv, err := d.StartProgram(context.Background(), []string{"sh", "-c", script},
				rig.ServerSpec{Name: "redis", LogPath: filepath.Join(t.TempDir(), "server.log"), CPUs: c.cpus, Mems: c.mems})
			if err != nil {
				t.Fatal(err)
			}
			launcher := srv.Cmd.Process.Pid
			testenv.MustWaitPing(t, addr, 10*time.Second)
			if err := srv.FindServer(context.Background(), addr, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if got := procfs.Root(d.Proc).Command(srv.Pid()); srv.Pid() == launcher || got != "redis-server" {
				t.Fatalf("got server pid %d (%s), want the redis-server below launcher %d", srv.Pid(), got, launcher)
			}
			if _, ok := pids.Pids[srv.Pid()]; !ok {
				t.Errorf("got pid file %v, want the server %d listed", pids.Pids, srv.Pid())
			}
			if c.cpus != "" {
				pl, err := d.Proc.Placement(srv.Pid())
				if err != nil || pl.CPUs != c.cpus || pl.Policy != "bind:"+c.mems {
					t.Errorf("server placement: got %+v, %v; want cpus %s, policy bind:%s", pl, err, c.cpus, c.mems)
				}
			}
			tree := procfs.Root(d.Proc).Tree(launcher)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := srv.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range tree {
				if safe.Alive(p.PID, p.StartTime) && !zombie(p.PID) {
					t.Errorf("got %s alive after stop, want the whole tree gone", procfs.Root(d.Proc).Describe(p.PID))
				}
			}
			if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				t.Errorf("got something listening on %s after stop, want nothing", addr)
			}
		})
	}
}

// zombie says whether pid has exited and waits for its parent's wait.
func zombie(pid int) bool {
	st, err := procfs.Root("/proc").ReadStat(pid)
	return err == nil && st.State == 'Z'
}

// TestDockerRuntimeStartsAForeignImage: the Docker runtime runs the redis
// image built here FROM scratch (nothing pulled) as the server, from the
// catalogue's entrypoint and flags, with the run's cpuset, data dir bind
// and labels: its process is found and proven to own the socket (INFO's
// process_id is its pid inside the container), its placement is the one
// asked for, and stop removes the container.
func TestDockerRuntimeStartsAForeignImage(t *testing.T) {
	image := testenv.MustRedisImage(t)
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runID := "foreign-" + newRunID()
	d, err := docker.NewDriver(ctx, docker.Endpoint{}, bin, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	redis, err := sut.Lookup("redis")
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ep, args, err := redis.Container(results.ScenarioMemory, sut.Values{Port: port, Bind: "127.0.0.1", Data: rig.ContainerDataDir})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := d.StartImage(ctx, rig.ImageRun{Name: image, Entrypoint: ep},
		rig.ServerSpec{Name: "redis", Args: args, CPUs: "1", Mems: "0", DataDir: t.TempDir(), LogPath: filepath.Join(t.TempDir(), "server.log")})
	if err != nil {
		t.Fatal(err)
	}
	testenv.MustWaitPing(t, addr, 20*time.Second)
	if err := srv.FindServer(ctx, addr, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	proof, err := srv.Probe(addr).Prove(ctx)
	if err != nil || proof.PID != srv.Pid() || proof.InfoPID != 1 {
		t.Errorf("proof: got %+v, %v; want pid %d, INFO process_id 1 (its pid in the container)", proof, err, srv.Pid())
	}
	if pl := srv.Placement(); pl.CPUs != "1" || pl.Mems != "0" {
		t.Errorf("placement: got %+v, want cpus 1, mems 0", pl)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", docker.LabelRun+"="+runID, docker.LabelRole+"=server")})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("got %d server containers of the run after stop (%v), want none", len(list.Items), err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("got something listening on %s after stop, want nothing", addr)
	}
}
