package testenv

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// NoDockerEnv is the variable that, set to 1, says this machine has no
// Docker for the tests even though a socket may be there: the Docker tests
// then skip.
const NoDockerEnv = "TIERBENCH_NO_DOCKER"

// dockerPingTimeout bounds the wait for a configured engine's answer; it is
// long because a loaded CI machine is slow, and a missed answer fails.
var dockerPingTimeout = 30 * time.Second

// DockerConfigured says whether this machine is set up for Docker and
// where: DOCKER_HOST when set, else the default socket when it exists.
// With TIERBENCH_NO_DOCKER=1, no DOCKER_HOST and no default socket, it is
// not, and why names which.
func DockerConfigured() (ok bool, why string) {
	if os.Getenv(NoDockerEnv) == "1" {
		return false, NoDockerEnv + "=1"
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return true, "DOCKER_HOST=" + h
	}
	sock := strings.TrimPrefix(client.DefaultDockerHost, "unix://")
	if _, err := os.Stat(sock); errors.Is(err, fs.ErrNotExist) {
		return false, "no DOCKER_HOST and no " + sock
	}
	// A socket that is there (even one this user may not open) means an
	// engine is configured: failing to reach it is a failure.
	return true, sock
}

// MustDockerConfigured skips the test when the machine has no Docker at
// all (DockerConfigured), and returns where the engine is otherwise.
func MustDockerConfigured(t testing.TB) string {
	t.Helper()
	ok, why := DockerConfigured()
	if !ok {
		t.Skipf("testenv: no Docker engine configured on this machine (%s)", why)
	}
	return why
}

// MustDocker returns a client of the machine's Docker engine, closed when
// the test ends. It skips only when no engine is configured at all
// (MustDockerConfigured); an engine that is configured but does not answer
// within 30 s fails the test, so a broken engine cannot pass as a skip.
func MustDocker(t testing.TB) *client.Client {
	t.Helper()
	where := MustDockerConfigured(t)
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatalf("testenv: Docker client for %s: %v", where, err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), dockerPingTimeout)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		t.Fatalf("testenv: the Docker engine at %s does not answer within %v (set %s=1 to run without Docker): %v", where, dockerPingTimeout, NoDockerEnv, err)
	}
	return cli
}

// MustImageAsUser is image with USER user (as "4242:4243"), made by
// committing a container of it (nothing pulled or built); removed when the
// test ends.
func MustImageAsUser(t testing.TB, image, user string) string {
	t.Helper()
	cli := MustDocker(t)
	ctx := context.Background()
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &container.Config{Image: image}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	tag := image + "-user" + strings.NewReplacer(":", "-").Replace(user)
	if _, err := cli.ContainerCommit(ctx, c.ID, client.ContainerCommitOptions{Reference: tag, Changes: []string{"USER " + user}}); err != nil {
		t.Fatalf("testenv: commit %s as user %s: %v", image, user, err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true}) })
	return tag
}
