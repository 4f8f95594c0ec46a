package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// The files copied into a container (the password and TLS files, 0400 in
// a 0500 directory) belong to the user the container runs as, so that a
// server whose image drops root can read them: Garnet's image runs as a
// user of its own (USER $APP_UID in its Dockerfile). The engine keeps the
// owner the tar stream gives (CopyToContainer without CopyUIDGID, whose
// lookup of a user is made among the engine host's users, not the
// image's).

// containerUser is the uid and gid of the user container id runs as (its
// Config.User, the image's USER unless the run set one); root for an
// image with no USER. The files copied into it and the directory given
// to it belong to that user.
func (d *Driver) containerUser(ctx context.Context, id string) (uid, gid int, err error) {
	res, err := d.Engine.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("inspect it for its user: %w", err)
	}
	user := ""
	if res.Container.Config != nil {
		user = res.Container.Config.User
	}
	return ownerOf(user, func() ([]byte, error) { return d.containerFile(ctx, id, "/etc/passwd") })
}

// giveDir gives dir, a directory of this host the run made for a
// container alone, to uid:gid, the user it runs as (containerUser), 0700,
// before it starts: a server whose image drops root (Garnet's) writes
// its log there. Nothing changes for a container that runs as root. The
// directory is opened without following a link and changed through its
// descriptor, so a link put in its place is refused, not followed. The
// run's servers other than tierbench run on this machine only (target
// refuses them across hosts), so dir is never another host's.
func (d *Driver) giveDir(dir string, uid, gid int) error {
	if !d.Endpoint.local() {
		return fmt.Errorf("give %s to the container's user: a directory of host %s cannot be changed from here", dir, d.Endpoint.Name)
	}
	if uid == 0 && gid == 0 {
		return nil
	}
	return chownDir(dir, uid, gid)
}

// chownDir makes dir, never a link, uid:gid's with mode 0700.
func chownDir(dir string, uid, gid int) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(fd)
		err = unix.Fchown(fd, uid, gid)
	}
	if err == nil {
		err = unix.Fchmod(fd, 0o700)
	}
	if errors.Is(err, unix.EPERM) && os.Geteuid() != 0 {
		return fmt.Errorf("give %s to the container's user %d:%d: only root may (this run is uid %d): run as root, or --runtime process", dir, uid, gid, os.Geteuid())
	}
	if err != nil {
		return fmt.Errorf("give %s to the container's user %d:%d: %w", dir, uid, gid, err)
	}
	return nil
}

// ownerOf resolves a container's user ("", "uid", "uid:gid", "name",
// "name:group") to a uid and gid; a name is looked up in the image's
// passwd file, read only then. The group of a name:group whose group is
// not a number is the user's own: the files' modes give the group
// nothing, so only the uid decides who reads them.
func ownerOf(user string, passwd func() ([]byte, error)) (uid, gid int, err error) {
	if user == "" {
		return 0, 0, nil
	}
	name, group, _ := strings.Cut(user, ":")
	gid, gerr := strconv.Atoi(group)
	if gerr != nil {
		gid = 0
	}
	if uid, err := strconv.Atoi(name); err == nil {
		return uid, gid, nil
	}
	b, err := passwd()
	if err != nil {
		return 0, 0, fmt.Errorf("the image runs as user %q: read its /etc/passwd: %w", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 4 || f[0] != name {
			continue
		}
		u, err1 := strconv.Atoi(f[2])
		g, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			break
		}
		if gerr == nil {
			g = gid
		}
		return u, g, nil
	}
	return 0, 0, fmt.Errorf("the image runs as user %q, whom its /etc/passwd does not list", name)
}

// containerFile is the content of the regular file at path in container
// id, read through the engine's API (up to 1 MiB).
func (d *Driver) containerFile(ctx context.Context, id, path string) ([]byte, error) {
	res, err := d.Engine.CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		return nil, err
	}
	defer res.Content.Close()
	tr := tar.NewReader(res.Content)
	h, err := tr.Next()
	if err != nil {
		return nil, err
	}
	if h.Typeflag != tar.TypeReg {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(tr, 1<<20))
}
