package docker

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/rig"
)

// TestOwnDirGivenToTheImagesUser: a server whose image runs as a user of
// its own (Garnet's: USER $APP_UID) writes the directory the run made for
// it, because the driver gives that directory to the user before the
// container starts; for an image that runs as root it stays as the run
// made it. The server is tierbench's own image, committed with USER
// 4242:4243, writing its log through O_DIRECT segment files into
// /data/server-own.
func TestOwnDirGivenToTheImagesUser(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	d, err := NewDriver(t.Context(), Endpoint{}, bin, "owndir-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	image := d.Image
	t.Cleanup(func() {
		d.Close(context.Background())
		cli.ImageRemove(context.Background(), image, client.ImageRemoveOptions{PruneChildren: true})
	})
	for _, c := range []struct {
		name     string
		user     string
		uid, gid int
		perm     os.FileMode
	}{
		{"root", "", 0, 0, 0o755},
		{"user 4242", "4242:4243", 4242, 4243, 0o700},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := image
			if c.user != "" {
				img = testenv.MustImageAsUser(t, image, c.user)
			}
			// --data as private as a user may make it: the image's user
			// cannot traverse it, only its own dir bound in.
			data := testenv.MustDiskDir(t)
			if err := os.Chmod(data, 0o700); err != nil {
				t.Fatal(err)
			}
			own := filepath.Join(data, "server-own")
			if err := os.Mkdir(own, 0o755); err != nil {
				t.Fatal(err)
			}
			port := testenv.FreePort(t)
			srv, err := d.StartImage(t.Context(), rig.ImageRun{Name: img, Entrypoint: []string{"/tierbench"}}, rig.ServerSpec{
				Name: "own-" + strings.ReplaceAll(c.name, " ", "-"),
				Args: []string{"server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--memory", "1m", "--page", "64k",
					"--segment", "1m", "--index", "1m", "--storage-tier", "--logdir", rig.ContainerDataDir + "/server-own",
					"--device-type", "native", "--device-io-backend", "libaio"},
				DataDir: data, OwnDir: own, LogPath: filepath.Join(t.TempDir(), "server.log"),
			})
			if err != nil {
				t.Fatalf("start the server as %q: %v", c.user, err)
			}
			defer srv.Stop(context.Background())
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			err = srv.FindServer(t.Context(), addr, 30*time.Second)
			if err == nil {
				err = setMany(addr, 2000, 4096)
			}
			if err != nil {
				out, _ := exec.Command("docker", "logs", srv.id).CombinedOutput()
				t.Fatalf("the server as %q: %v; its log:\n%s", c.user, err, out)
			}
			st := statOf(t, own)
			if st.Uid != uint32(c.uid) || st.Gid != uint32(c.gid) || os.FileMode(st.Mode).Perm() != c.perm {
				t.Errorf("%s: got %d:%d mode %o, want %d:%d mode %o", own, st.Uid, st.Gid, os.FileMode(st.Mode).Perm(), c.uid, c.gid, c.perm)
			}
			segment := statOf(t, filepath.Join(own, "segment.0"))
			if segment.Uid != uint32(c.uid) {
				t.Errorf("segment.0: owned by %d, want %d (the server's user)", segment.Uid, c.uid)
			}
		})
	}
}

// setMany SETs n keys of size-byte values at addr in one pipeline, so the
// log spills past its memory onto the device's segment files.
func setMany(addr string, n, size int) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	w := bufio.NewWriter(conn)
	value := strings.Repeat("v", size)
	for i := range n {
		key := fmt.Sprintf("key:%06d", i)
		fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(value), value)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	for i := range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reply %d: %w", i, err)
		}
		if line != "+OK\r\n" {
			return fmt.Errorf("reply %d: got %q, want +OK", i, line)
		}
	}
	return nil
}

func statOf(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

// TestChownDirRefusesLinks: the directory given to a container's user is
// changed through a descriptor opened without following links, so a link
// in its place, or a file, is refused and what it names is untouched.
func TestChownDirRefusesLinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "dir")
	victim := filepath.Join(base, "victim")
	file := filepath.Join(base, "file")
	link := filepath.Join(base, "link")
	for _, err := range []error{os.Mkdir(dir, 0o755), os.Mkdir(victim, 0o755), os.WriteFile(file, nil, 0o644), os.Symlink(victim, link)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path string
		ok   bool
	}{{dir, true}, {link, false}, {file, false}} {
		err := chownDir(c.path, 4242, 4243)
		if (err == nil) != c.ok {
			t.Errorf("chownDir(%s): got %v, want ok %v", c.path, err, c.ok)
		}
	}
	if st := statOf(t, dir); st.Uid != 4242 || st.Gid != 4243 || os.FileMode(st.Mode).Perm() != 0o700 {
		t.Errorf("dir: got %d:%d mode %o, want 4242:4243 mode 700", st.Uid, st.Gid, os.FileMode(st.Mode).Perm())
	}
	if st := statOf(t, victim); st.Uid != uint32(os.Getuid()) || os.FileMode(st.Mode).Perm() != 0o755 {
		t.Errorf("the link's target: got %d mode %o, want untouched (%d, 755)", st.Uid, os.FileMode(st.Mode).Perm(), os.Getuid())
	}
}
