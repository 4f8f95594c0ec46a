package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestAIOCheck(t *testing.T) {
	tests := []struct {
		max, nr    int64
		threads    []int
		qd         int
		wantStatus Status
		wantFix    string
	}{
		{65536, 0, []int{8, 32, 48, 64}, 64, Pass, ""},
		{65536, 0, []int{64}, 1024, Pass, ""},
		{65536, 0, []int{64}, 4096, Fail, "sysctl -w fs.aio-max-nr=262144"},
		{65536, 1000, []int{64}, 1024, Fail, "sysctl -w fs.aio-max-nr=131072"},
		{4194304, 0, []int{8, 32, 48, 64}, 4096, Pass, ""},
	}
	for _, tt := range tests {
		c := aioCheck(AIOBudget{MaxNr: tt.max, Nr: tt.nr}, nil, tt.threads, tt.qd)
		if c.Status != tt.wantStatus || !strings.Contains(c.Detail, tt.wantFix) {
			t.Errorf("aio-max-nr %d nr %d threads %v qd %d: got %v %q, want %v with %q", tt.max, tt.nr, tt.threads, tt.qd, c.Status, c.Detail, tt.wantStatus, tt.wantFix)
		}
	}
	server := device.AIOEventsNeeded(device.Config{Backend: device.BackendLibaio})
	if server < 4096 {
		t.Errorf("device.AIOEventsNeeded(defaults) = %d, want at least one context of 4096", server)
	}
	needs := []struct{ threads, qd, want int }{
		{64, 64, max(4096, server)},
		{64, 1024, max(65536, server)},
		{0, 64, server},
	}
	for _, n := range needs {
		if got := AIONeed(n.threads, n.qd); got != n.want {
			t.Errorf("AIONeed(%d, %d) = %d, want %d", n.threads, n.qd, got, n.want)
		}
	}
}

func TestDataDirs(t *testing.T) {
	file := filepath.Join(testenv.MustDiskDir(t), "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shm := filepath.Join("/dev/shm", fmt.Sprintf("tierbench-test-%d", os.Getpid()))
	tests := []struct {
		name, dir, want string
	}{
		{"parent is a file", filepath.Join(file, "data"), "cannot be used: not a directory"},
		{"parent cannot be made", "/proc/tierbench-test/data", "cannot be created"},
		{"dir is a file", file, "is not a directory"},
		{"tmpfs", shm, "is on tmpfs"},
		{"proc refuses files", "/proc/sys", "/proc/sys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) { c.DataDir = tt.dir; c.FIO = true })
			c := mustCheck(t, rep, CheckODirect)
			if c.Status != Fail || !strings.Contains(c.Detail, tt.want) {
				t.Errorf("got odirect %v %q, want fail containing %q", c.Status, c.Detail, tt.want)
			}
			if f := mustCheck(t, rep, CheckFIO); f.Status != Fail {
				t.Errorf("got fio %v %q, want fail (not run on a bad data dir)", f.Status, f.Detail)
			}
			if !rep.Failed() {
				t.Error("got Failed() false, want true")
			}
		})
	}
	if _, err := os.Stat(shm); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v for %s, want it removed again after preflight created it", err, shm)
	}
}

func TestFIOTooBigForDisk(t *testing.T) {
	var probes *fakeProbes
	rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) {
		c.FIO = true
		c.FIOFiles = 1 << 20
		c.FIOFileBytes = 1 << 30 // 1 PiB in all
		probes = &fakeProbes{}
		c.Probes = probes.probes()
	})
	c := mustCheck(t, rep, CheckFIO)
	if c.Status != Fail || !strings.Contains(c.Detail, "lower --fio-size") {
		t.Errorf("got fio %v %q, want fail asking for a smaller --fio-size", c.Status, c.Detail)
	}
	if len(probes.jobs) != 0 {
		t.Errorf("got %d fio runs, want none", len(probes.jobs))
	}
	if d := mustCheck(t, rep, CheckDiskSpace); d.Status != Fail {
		t.Errorf("got disk-space %v %q, want fail", d.Status, d.Detail)
	}
}

func TestFIOFailures(t *testing.T) {
	tests := []struct {
		name, script string
		wantStatus   Status
		wantDetail   string
	}{
		{"exits non-zero", "#!/bin/sh\necho 'fio: engine io_uring not loadable' >&2\nexit 1\n", Fail, "engine io_uring not loadable"},
		{"prints non-JSON", "#!/bin/sh\necho 'Segmentation fault'\n", Fail, "Segmentation fault"},
		{"missing", "", Warn, "apt-get install fio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if tt.script != "" {
				if err := os.WriteFile(filepath.Join(bin, "fio"), []byte(tt.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin)
			rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) {
				c.FIO = true
				c.Probes.FIO = nil // the real fio.Run, finding the fake fio on PATH
			})
			c := mustCheck(t, rep, CheckFIO)
			if c.Status != tt.wantStatus || !strings.Contains(c.Detail, tt.wantDetail) || !strings.Contains(c.Detail, "fio") {
				t.Errorf("got fio %v %q, want %v naming fio and %q", c.Status, c.Detail, tt.wantStatus, tt.wantDetail)
			}
			if rep.FIO != nil {
				t.Errorf("got fio baseline %+v, want none", rep.FIO)
			}
		})
	}
}

func TestDocker(t *testing.T) {
	t.Run("dead socket", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		t.Setenv("DOCKER_HOST", "unix://"+sock)
		info, err := probeDocker(context.Background())
		c := dockerCheck(info, err)
		if c.Status != Warn || !strings.Contains(c.Detail, sock) {
			t.Errorf("got %v %q, want warn naming %s", c.Status, c.Detail, sock)
		}
	})
	t.Run("engine answers an error", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"engine is shutting down"}`))
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		t.Setenv("DOCKER_HOST", "unix://"+sock)
		info, err := probeDocker(context.Background())
		c := dockerCheck(info, err)
		if c.Status != Warn || !strings.Contains(c.Detail, sock) {
			t.Errorf("got %v %q, want warn naming %s", c.Status, c.Detail, sock)
		}
	})
	t.Run("real engine", func(t *testing.T) {
		testenv.MustDockerConfigured(t)
		info, err := probeDocker(context.Background())
		if err != nil {
			t.Fatalf("probe the real engine: %v", err)
		}
		if info.Version == "" || info.APIVersion == "" || info.StorageDriver == "" || info.CgroupVersion == "" {
			t.Errorf("got %+v, want version, API version, storage driver and cgroup version", info)
		}
	})
}

// TestFIOPinnedSweep: with FIOCPUs the sweep runs again with every job
// pinned there, one job per CPU at most, after the host sweep and on its
// files; the report keeps both, with what the disk's driver held at each
// step, and the check says where fio ran.
func TestFIOPinnedSweep(t *testing.T) {
	probes := &fakeProbes{}
	rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) {
		c.FIO, c.FIOCPUs, c.FIOMems, c.FIORuntimeSeconds = true, "1", "0", 1
		c.Probes = probes.probes()
	})
	if rep.FIO == nil || rep.FIOPinned == nil {
		t.Fatalf("got host %v pinned %v baselines, want both", rep.FIO, rep.FIOPinned)
	}
	if rep.FIO.CPUs != "" || rep.FIOPinned.CPUs != "1" || rep.FIOPinned.Mems != "0" || rep.FIOPinned.CPUCount != 1 {
		t.Errorf("got host CPUs %q, pinned %q mems %q count %d; want \"\", 1, 0, 1", rep.FIO.CPUs, rep.FIOPinned.CPUs, rep.FIOPinned.Mems, rep.FIOPinned.CPUCount)
	}
	var pinnedRuns int
	for _, j := range probes.jobs {
		if !j.Registered || !j.Batched {
			t.Errorf("job %+v: want fio's files and buffers registered and its reads batched", j)
		}
		if j.CPUs == "" {
			if pinnedRuns > 0 {
				t.Errorf("a host run after the pinned ones: %+v", j)
			}
			continue
		}
		pinnedRuns++
		if j.CPUs != "1" || j.Mems != "0" || j.Jobs != 1 {
			t.Errorf("pinned job %+v: want CPUs 1, mems 0, one job", j)
		}
	}
	if pinnedRuns < 2 {
		t.Errorf("got %d pinned fio runs, want a sweep and its 4 KiB run", pinnedRuns)
	}
	// Each step sampled the disk's driver (the tree's vda/inflight), and
	// both checks say it where fio kept more in flight.
	for _, b := range []*FIOBaseline{rep.FIO, rep.FIOPinned} {
		for _, p := range b.Sweep {
			if p.DriverDepth != 85 {
				t.Errorf("sweep on CPUs %q, %d in flight: got driver depth %d, want 85", b.CPUs, p.Depth, p.DriverDepth)
			}
		}
	}
	for _, name := range []string{CheckFIO, CheckFIOPinned} {
		if c := mustCheck(t, rep, name); !strings.Contains(c.Detail, "128: ") || !strings.Contains(c.Detail, "(85 at the disk's driver)") {
			t.Errorf("%s: got %q, want the 128 step with 85 at the disk's driver", name, c.Detail)
		}
	}
	if c := mustCheck(t, rep, CheckFIOPinned); c.Status != Pass || !strings.Contains(c.Detail, "pinned to CPUs 1 and memory node(s) 0") {
		t.Errorf("got %s %v %q, want pass naming the CPUs", CheckFIOPinned, c.Status, c.Detail)
	}
}

// TestFIOSteal: the baseline keeps the steal of the host while the sweep
// ran, and the fio check says it, naming the host's stalls when it is
// noticeable; a tree whose /proc has no stat gives none.
func TestFIOSteal(t *testing.T) {
	tests := []struct {
		name             string
		stealPerRunTicks uint64 // of 1000 ticks a fio run
		want             string
		stalls           bool
	}{
		{"none", 0, "took 0.0 % of this host's CPU time while it ran", false},
		{"noticeable", 30, "took 3.0 % of this host's CPU time while it ran", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", "vm-host"))
			stat := filepath.Join(root, "proc", "stat")
			var total, steal uint64
			write := func() {
				if err := os.WriteFile(stat, fmt.Appendf(nil, "cpu  %d 0 0 0 0 0 0 %d 0 0\n", total-steal, steal), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write()
			rep, _ := runTree(t, root, func(c *Config) {
				c.FIO = true
				fake := c.Probes.FIO
				c.Probes.FIO = func(ctx context.Context, job fio.Job) (fio.Result, error) {
					total, steal = total+1000, steal+tt.stealPerRunTicks
					write()
					return fake(ctx, job)
				}
			})
			c := mustCheck(t, rep, CheckFIO)
			if rep.FIO == nil || rep.FIO.StealShare == nil || !strings.Contains(c.Detail, tt.want) || strings.Contains(c.Detail, "stalls of a few ms") != tt.stalls {
				t.Errorf("got baseline %+v, fio check %q; want %q (stalls named: %v)", rep.FIO, c.Detail, tt.want, tt.stalls)
			}
		})
	}
	rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) { c.FIO = true })
	if c := mustCheck(t, rep, CheckFIO); rep.FIO == nil || rep.FIO.StealShare != nil || strings.Contains(c.Detail, "steal") {
		t.Errorf("a tree without /proc/stat: got baseline %+v, fio check %q; want no steal", rep.FIO, c.Detail)
	}
}
