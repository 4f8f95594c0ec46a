package testenv

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

func TestLddPaths(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f38)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f38)\n" +
		"\tlibgone.so.1 => not found\n"
	got := lddPaths(out)
	want := []string{"/lib/x86_64-linux-gnu/libm.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRedisImageServes: the image built FROM scratch from this host's
// redis-server runs on the host network and answers as its own process.
func TestRedisImageServes(t *testing.T) {
	tag := MustRedisImage(t)
	cli := MustDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in, err := cli.ImageInspect(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	if in.Config == nil || !slices.Equal(in.Config.Entrypoint, []string{RedisImageEntrypoint}) {
		t.Errorf("got entrypoint %v, want [%s]", in.Config, RedisImageEntrypoint)
	}
	port := FreePort(t)
	resp, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: tag,
		Cmd: []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}},
		HostConfig: &container.HostConfig{NetworkMode: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.ContainerRemove(context.Background(), resp.ID, client.ContainerRemoveOptions{Force: true})
	if _, err := cli.ContainerStart(ctx, resp.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	MustWaitPing(t, addr, 20*time.Second)
	if pid, err := serverPid(addr, ""); err != nil || pid < 1 {
		t.Errorf("INFO server process_id: got %d, %v; want the container's redis-server", pid, err)
	}
}
