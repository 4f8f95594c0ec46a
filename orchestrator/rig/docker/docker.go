package docker

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/images"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// Container labels. Every container of a run carries the run id, and the
// pid and start time of the process that owns it, so a later run can tell
// a leftover (owner gone) from a run in progress.
const (
	LabelRun   = "tierbench.run"
	labelOwner = "tierbench.owner"
	LabelRole  = "tierbench.role"
	labelImage = "tierbench.image"
)

// dockerDriver runs server and client as containers of an image built
// FROM scratch from the static binary.
type Driver struct {
	Endpoint Endpoint // the engine; its Name is the host's
	Engine   *client.Client
	Image    string
	RunID    string
	Owner    string
	proc     rig.ProcRoot

	mu  sync.Mutex
	ids map[string]string // container id → log path
	// unprivileged is set once the engine refused a privileged container
	// (an engine inside a sandbox that lacks some capability itself):
	// servers then run with seccomp and AppArmor unconfined and every
	// capability this host has, which is what io_uring, libaio and
	// O_DIRECT need from "privileged".
	unprivileged bool
	Warn         func(format string, a ...any)
	// Password, when set, is copied into every container before it
	// starts, at containerPasswordFile (0400), for --auth-file: through
	// the engine's API, so it is in no command line, environment,
	// inspect output or file on any host's disk.
	Password string
	// BeforeDrop, when set, runs in close after the run's servers are
	// removed and before its data dirs' holds are let go: the final wipe.
	BeforeDrop func()
	// secrets are files copied into every container the same way, under
	// containerTLSDir (0400): the run's TLS certificates and keys.
	secrets map[string][]byte
	// lease holds the run's lease container on this engine (lease.go).
	lease   *client.HijackedResponse
	leaseID string
	// holds keep the run's data dirs on this engine's host (datahold.go).
	holds []dataHold
	// serverID is the server container running now: a remote host's
	// counters are read inside it (remoteHost).
	serverID string
}

// newDockerDriver connects to the engine at ep (the zero Endpoint: the
// one the environment names) and builds the image unless one for this
// exact binary exists there already.
func NewDriver(ctx context.Context, ep Endpoint, binary, runID string) (*Driver, error) {
	cli, err := ep.Client()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		if ep.local() {
			return nil, fmt.Errorf("orchestrator: the Docker engine does not answer: %w", err)
		}
		return nil, fmt.Errorf("orchestrator: host %s: the Docker engine at %s does not answer: %w", ep.Name, ep.Display(), err)
	}
	var nonce [4]byte
	rand.Read(nonce[:])
	// The nonce tells apart two owners with one pid and start time on two
	// machines driving this engine.
	d := &Driver{Endpoint: ep, Engine: cli, RunID: runID, proc: "/proc", ids: map[string]string{},
		Owner: fmt.Sprintf("%d:%d:%x", os.Getpid(), safe.StartTime(os.Getpid()), nonce)}
	if err := d.buildImage(ctx, binary); err != nil {
		cli.Close()
		return nil, err
	}
	return d, nil
}

func (d *Driver) Name() string           { return plan.RuntimeDocker }
func (d *Driver) DataPath(string) string { return rig.ContainerDataDir }

// Host is this machine for the local engine; for another host's engine,
// that host through hostprobe containers.
func (d *Driver) Host() rig.ServerHost {
	if d.Endpoint.local() {
		return rig.LocalHost{}
	}
	return remoteHost{d}
}

// CheckStatic refuses a binary that needs a dynamic loader: FROM scratch
// has none.
func CheckStatic(binary string) error {
	f, err := elf.Open(binary)
	if err != nil {
		return fmt.Errorf("orchestrator: %s is not an ELF binary: %w", binary, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("orchestrator: %s is dynamically linked; the image is FROM scratch: build it with CGO_ENABLED=0 go build ./cmd/tierbench", binary)
		}
	}
	return nil
}

// buildImage builds tierbench:<hash of the binary> from an in-memory tar
// context: images.Dockerfile and the binary. Nothing is pulled.
func (d *Driver) buildImage(ctx context.Context, binary string) error {
	if err := CheckStatic(binary); err != nil {
		return err
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("orchestrator: read the binary for the image: %w", err)
	}
	sum := sha256.Sum256(bin)
	d.Image = "tierbench:" + hex.EncodeToString(sum[:6])
	if _, err := d.Engine.ImageInspect(ctx, d.Image); err == nil {
		return nil
	}
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	files := []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(images.Dockerfile)}, {images.BinaryName, 0o755, bin}}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return fmt.Errorf("orchestrator: image context: %w", err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("orchestrator: image context: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("orchestrator: image context: %w", err)
	}
	resp, err := d.Engine.ImageBuild(ctx, &ctxTar, client.ImageBuildOptions{
		Tags: []string{d.Image}, Remove: true, ForceRemove: true, Dockerfile: "Dockerfile",
		Labels:    map[string]string{labelImage: "1"},
		BuildArgs: images.BuildArgs(bin),
	})
	if err != nil {
		return fmt.Errorf("orchestrator: build image %s: %w", d.Image, err)
	}
	defer resp.Body.Close()
	// The build streams JSON messages; an error arrives as one of them.
	dec := json.NewDecoder(resp.Body)
	var log strings.Builder
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("orchestrator: build image %s: read progress: %w", d.Image, err)
		}
		log.WriteString(msg.Stream)
		if msg.Error != "" {
			return fmt.Errorf("orchestrator: build image %s: %s\n%s", d.Image, msg.Error, log.String())
		}
	}
	if _, err := d.Engine.ImageInspect(ctx, d.Image); err != nil {
		return fmt.Errorf("orchestrator: build image %s: no image after the build: %w\n%s", d.Image, err, log.String())
	}
	return nil
}

func (d *Driver) labels(role string) map[string]string {
	return map[string]string{LabelRun: d.RunID, labelOwner: d.Owner, LabelRole: role}
}

// Create creates and starts a container of the image on the host network.
func (d *Driver) Create(ctx context.Context, role, name string, args []string, cpus, mems string, privileged bool, binds []string, logPath string) (string, error) {
	return d.createOf(ctx, containerSpec{role: role, name: name, args: args, cpus: cpus, mems: mems, privileged: privileged, binds: binds, logPath: logPath})
}

// containerSpec is what a container is created from.
type containerSpec struct {
	img        rig.ImageRun // zero: the run's own image and entrypoint
	role, name string
	args       []string
	cpus, mems string
	privileged bool
	binds      []string
	logPath    string
	// ownDir, when set, is a directory of this host the run made for the
	// container alone, given to the user it runs as before it starts
	// (giveDir).
	ownDir string
}

// createOf creates and starts the container c. A privileged one runs
// unprivileged with the capabilities a server needs (serverCapabilities)
// once the engine has refused one, for the rest of the run.
func (d *Driver) createOf(ctx context.Context, c containerSpec) (string, error) {
	id, err := d.createOnce(ctx, c)
	if err != nil && c.privileged && !d.unprivileged && strings.Contains(err.Error(), "apply caps") {
		d.Remove(context.Background(), id)
		d.unprivileged = true
		if d.Warn != nil {
			d.Warn("docker: the engine refused a privileged container (%v); servers run with seccomp=unconfined, apparmor=unconfined and capabilities %s instead\n", err, strings.Join(serverCapabilities, ", "))
		}
		return d.createOnce(ctx, c)
	}
	return id, err
}

// Mode says how a server container is confined.
func (d *Driver) Mode() string {
	if d.unprivileged {
		return "docker, seccomp/apparmor unconfined, capabilities +" + strings.Join(serverCapabilities, " +") + " (privileged refused by the engine)"
	}
	return "docker, privileged"
}

func (d *Driver) createOnce(ctx context.Context, c containerSpec) (string, error) {
	cfg := &container.Config{Image: cmp.Or(c.img.Name, d.Image), Entrypoint: c.img.Entrypoint, Cmd: c.args, Labels: d.labels(c.role)}
	host := hostConfigOf(c, d.unprivileged)
	cname := fmt.Sprintf("tierbench-%s-%s-%s", d.RunID, c.role, c.name)
	d.Remove(ctx, cname) // a container of the same name from a failed attempt
	resp, err := d.Engine.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: cname})
	if err != nil {
		return "", fmt.Errorf("orchestrator: create container %s: %w", cname, err)
	}
	d.mu.Lock()
	d.ids[resp.ID] = c.logPath
	d.mu.Unlock()
	if d.Password != "" || len(d.secrets) > 0 || c.ownDir != "" {
		// The files copied in and the directory given belong to the
		// user the container runs as, looked up once.
		uid, gid, err := d.containerUser(ctx, resp.ID)
		if err == nil {
			err = d.copySecrets(ctx, resp.ID, uid, gid)
		}
		if err == nil && c.ownDir != "" {
			err = d.giveDir(c.ownDir, uid, gid)
		}
		if err != nil {
			return resp.ID, fmt.Errorf("orchestrator: container %s: %w", cname, err)
		}
	}
	if _, err := d.Engine.ContainerStart(ctx, resp.ID, client.ContainerStartOptions{}); err != nil {
		return resp.ID, fmt.Errorf("orchestrator: start container %s: %w", cname, err)
	}
	return resp.ID, nil
}

// hostConfigOf is how container c runs: on the host network, its binds
// and cpusets; privileged when it asks to be, or, once the engine has
// refused that (unprivileged), unconfined with serverCapabilities.
func hostConfigOf(c containerSpec, unprivileged bool) *container.HostConfig {
	host := &container.HostConfig{
		NetworkMode: "host",
		Privileged:  c.privileged && !unprivileged,
		Binds:       c.binds,
		Resources:   container.Resources{CpusetCpus: c.cpus, CpusetMems: c.mems},
	}
	if c.privileged && unprivileged {
		host.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"}
		host.CapAdd = serverCapabilities
	}
	return host
}

// copySecrets puts the run's password and TLS files into a created
// container, before it starts, as a tar stream through the engine's API,
// owned by uid:gid, the user it runs as (containerUser).
func (d *Driver) copySecrets(ctx context.Context, id string, uid, gid int) error {
	if d.Password == "" && len(d.secrets) == 0 {
		return nil
	}
	var err error
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o400, Size: int64(len(b)), Uid: uid, Gid: gid}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if d.Password != "" {
		err = add(strings.TrimPrefix(rig.ContainerPasswordFile, "/"), []byte(d.Password+"\n"))
	}
	if len(d.secrets) > 0 && err == nil {
		err = tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(rig.ContainerTLSDir, "/") + "/", Mode: 0o500, Typeflag: tar.TypeDir, Uid: uid, Gid: gid})
	}
	for _, name := range slices.Sorted(maps.Keys(d.secrets)) {
		if err == nil {
			err = add(strings.TrimPrefix(rig.ContainerTLSDir, "/")+"/"+name, d.secrets[name])
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		_, err = d.Engine.CopyToContainer(ctx, id, client.CopyToContainerOptions{DestinationPath: "/", Content: &buf})
	}
	if err != nil {
		return fmt.Errorf("copy the password and TLS files in: %w", err)
	}
	return nil
}

// Give copies files into every container the driver creates from now on,
// beside those given before (the TLS files and a server's password file).
func (d *Driver) Give(files map[string][]byte) {
	if d.secrets == nil {
		d.secrets = map[string][]byte{}
	}
	maps.Copy(d.secrets, files)
}

// Capabilities: containers, from images, with the files given copied in.
func (d *Driver) Capabilities() rig.Capabilities {
	return rig.Capabilities{Images: true, FilesDir: rig.ContainerTLSDir}
}

// KeepPassword copies auth into every container the driver creates from
// now on, at rig.ContainerPasswordFile.
func (d *Driver) KeepPassword(auth string) string {
	d.Password = auth
	return rig.ContainerPasswordFile
}

// hostPID returns the container's main process as this host sees it.
func (d *Driver) hostPID(ctx context.Context, id string) (int, error) {
	res, err := d.Engine.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return 0, fmt.Errorf("orchestrator: inspect container %s: %w", id[:12], err)
	}
	in := res.Container
	if in.State == nil || in.State.Pid == 0 {
		return 0, fmt.Errorf("orchestrator: container %s is not running", id[:12])
	}
	return in.State.Pid, nil
}

// saveLogs writes a container's stdout and stderr to path and returns stdout.
func (d *Driver) saveLogs(ctx context.Context, id, path string) ([]byte, error) {
	rc, err := d.Engine.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return nil, fmt.Errorf("orchestrator: logs of container %s: %w", id[:12], err)
	}
	defer rc.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, rc); err != nil {
		return nil, fmt.Errorf("orchestrator: logs of container %s: %w", id[:12], err)
	}
	if path != "" {
		var all bytes.Buffer
		all.Write(stderr.Bytes())
		all.Write(stdout.Bytes())
		safe.WriteFileNoFollow(path, all.Bytes(), 0o644)
	}
	return stdout.Bytes(), nil
}

// Remove saves the container's logs and removes it, forcibly.
func (d *Driver) Remove(ctx context.Context, id string) error {
	d.mu.Lock()
	logPath, ok := d.ids[id]
	delete(d.ids, id)
	d.mu.Unlock()
	if ok && logPath != "" {
		d.saveLogs(ctx, id, logPath)
	}
	_, err := d.Engine.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	if err != nil && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("orchestrator: remove container %s: %w", id[:12], err)
	}
	return nil
}

func (d *Driver) RunClient(ctx context.Context, s rig.ClientSpec) ([]byte, results.Placement, error) {
	pl := results.Placement{WantCPUs: s.CPUs, WantMems: s.Mems}
	id, err := d.Create(ctx, "client", s.Name, s.Args, s.CPUs, s.Mems, false, nil, "")
	if id != "" {
		defer d.Remove(context.Background(), id)
	}
	if err != nil {
		return nil, pl, err
	}
	if pid, err := d.hostPID(ctx, id); err == nil && d.Endpoint.local() {
		if got, err := d.proc.Placement(pid); err == nil {
			got.WantCPUs, got.WantMems = s.CPUs, s.Mems
			pl = got
		}
	} else if err == nil {
		// Another host: its /proc is read there, while the client waits
		// for its start time or runs.
		if a, err := d.Probe(ctx, id, rig.ProbeRequest{PID: 1}); err == nil && a.Placement != nil {
			pl = *a.Placement
			pl.WantCPUs, pl.WantMems = s.CPUs, s.Mems
		}
	}
	stdout, status, err := d.Wait(ctx, id, "client "+s.Name, s.LogPath)
	if err != nil {
		return nil, pl, err
	}
	if status != 0 {
		return stdout, pl, fmt.Errorf("orchestrator: client %s exited with status %d (log %s)", s.Name, status, s.LogPath)
	}
	return stdout, pl, nil
}

// PreflightAt runs `tierbench preflight --json` inside the server's
// container: it proves io_uring and O_DIRECT work there, under the
// container's seccomp profile and mounts, not just on the host.
func (d *Driver) PreflightAt(ctx context.Context, srv rig.ServerHandle, dataDir string, args []string) ([]byte, error) {
	ds, ok := srv.(*dockerServer)
	if !ok {
		return nil, fmt.Errorf("orchestrator: not a container server")
	}
	out, stderr, code, err := d.exec(ctx, ds.id, append([]string{"preflight", "--data-dir", dataDir, "--json"}, args...))
	if err != nil {
		return nil, err
	}
	if code != 0 && code != 1 {
		return out, fmt.Errorf("orchestrator: preflight in the server container exited %d: %s", code, rig.Clip(stderr))
	}
	return out, nil
}

// Close removes every container of this run, keeping their logs.
func (d *Driver) Close(ctx context.Context) error {
	res, err := d.Engine.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelRun+"="+d.RunID)})
	list := res.Items
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("orchestrator: list containers of run %s: %w", d.RunID, err))
	}
	// The servers and clients go first; then the data dirs are wiped
	// (beforeDrop) while this run still holds them, so no other run can
	// have taken one in between; only then are the holds let go.
	removeAll := func(hold bool) {
		for _, c := range list {
			if (c.Labels[LabelRole] == roleDataHold) == hold {
				if err := d.Remove(ctx, c.ID); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	removeAll(false)
	if d.BeforeDrop != nil {
		d.BeforeDrop()
	}
	d.dropHolds(ctx)
	d.DropLease(ctx)
	removeAll(true)
	d.Engine.Close()
	return errors.Join(errs...)
}

// RemoveStale removes containers left by earlier runs whose owner process
// is gone, and says what it removed.
func (d *Driver) RemoveStale(ctx context.Context) []string {
	res, err := d.Engine.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", LabelRun)})
	if err != nil {
		return []string{fmt.Sprintf("could not list earlier containers: %v", err)}
	}
	var did []string
	// The owner decides, not the run id: a resumed run has the id of the
	// run it completes, whose leftovers must go too.
	for _, c := range staleContainers(res.Items) {
		if _, err := d.Engine.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
			did = append(did, fmt.Sprintf("could not remove stale container %s: %v", c.ID[:12], err))
			continue
		}
		did = append(did, fmt.Sprintf("removed container %s (%s) left by run %s", strings.TrimPrefix(FirstName(c.Names), "/"), c.Labels[LabelRole], c.Labels[LabelRun]))
	}
	return did
}

func FirstName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// serverCapabilities are what the server is given beyond the engine's
// defaults when the engine refuses a privileged container, computed from
// what it does rather than from any host, so they are the same on every
// host: the io_uring and aio syscalls need seccomp unconfined, not a
// capability; O_DIRECT, set_mempolicy and sched_setaffinity of its own
// threads need none; IPC_LOCK lets io_uring's rings count against no
// RLIMIT_MEMLOCK, which kernels before 5.12 charge them to. On this
// project's test hosts the server, its preflight and hostprobe pass with
// every other capability dropped.
var serverCapabilities = []string{"IPC_LOCK"}
