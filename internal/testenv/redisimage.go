package testenv

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// RedisImageEntrypoint is where MustRedisImage's image holds redis-server,
// where the official redis image holds it too.
const RedisImageEntrypoint = "/usr/local/bin/redis-server"

// redisImageLabel marks the images MustRedisImage builds.
const redisImageLabel = "tierbench.test"

var redisImage struct {
	sync.Mutex
	tag string
}

// MustRedisImage builds, once per test binary and only when the engine
// lacks it, an image FROM scratch holding this host's redis-server and
// the shared libraries ldd lists for it (the dynamic loader included),
// with redis-server as its entrypoint: a redis image made here, nothing
// pulled. Its tag names the hash of those files, so a changed host
// redis-server builds a new one. It skips without Docker as MustDocker
// does, and fails the test when the build fails.
func MustRedisImage(t testing.TB) string {
	t.Helper()
	cli := MustDocker(t)
	redisImage.Lock()
	defer redisImage.Unlock()
	if redisImage.tag != "" {
		return redisImage.tag
	}
	bin := MustLookPath(t, "redis-server")
	files, err := redisRootFS(bin)
	if err != nil {
		t.Fatalf("testenv: redis image: %v", err)
	}
	sum := sha256.New()
	for _, f := range files {
		fmt.Fprintf(sum, "%s %d\n", f.path, len(f.data))
		sum.Write(f.data)
	}
	tag := "tierbench-test-redis:" + hex.EncodeToString(sum.Sum(nil)[:6])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, tag); err != nil {
		if err := buildFromScratch(ctx, cli, tag, files); err != nil {
			t.Fatalf("testenv: redis image %s: %v", tag, err)
		}
	}
	redisImage.tag = tag
	return tag
}

type rootFile struct {
	path string // in the image, absolute
	mode int64
	data []byte
}

// redisRootFS is redis-server at RedisImageEntrypoint and every library
// ldd names for it at the path ldd names (its target's content when that
// path is a link).
func redisRootFS(bin string) ([]rootFile, error) {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	files := []rootFile{{RedisImageEntrypoint, 0o755, data}}
	for _, lib := range lddPaths(string(out)) {
		data, err := os.ReadFile(lib)
		if err != nil {
			return nil, fmt.Errorf("library of %s: %w", bin, err)
		}
		files = append(files, rootFile{lib, 0o755, data})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

// lddPaths takes the libraries' paths from ldd's output: "name => /path
// (addr)" or "/path (addr)"; the vdso has none.
func lddPaths(out string) []string {
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i, w := range f {
			if filepath.IsAbs(w) && (i == 0 || f[i-1] == "=>") {
				paths = append(paths, w)
				break
			}
		}
	}
	return paths
}

// buildFromScratch builds tag from an in-memory context: a Dockerfile
// FROM scratch copying files in, redis-server the entrypoint.
func buildFromScratch(ctx context.Context, cli *client.Client, tag string, files []rootFile) error {
	dockerfile := "FROM scratch\nCOPY rootfs/ /\nENTRYPOINT [\"" + RedisImageEntrypoint + "\"]\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) error {
		return errors.Join(tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}), write(tw, data))
	}
	if err := add("Dockerfile", 0o644, []byte(dockerfile)); err != nil {
		return err
	}
	for _, f := range files {
		if err := add("rootfs"+f.path, f.mode, f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	resp, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, Dockerfile: "Dockerfile",
		Labels: map[string]string{redisImageLabel: "redis"},
	})
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("build: read progress: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("build: %s", msg.Error)
		}
	}
	if _, err := cli.ImageInspect(ctx, tag); err != nil {
		return fmt.Errorf("no image after the build: %w", err)
	}
	return nil
}

func write(w io.Writer, data []byte) error {
	_, err := w.Write(data)
	return err
}
