package hostcheck

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/testenv"
)

// fakeProbes stands in for the kernel and engine where a fake tree
// describes another host; it records the fio jobs it was given.
type fakeProbes struct {
	mu   sync.Mutex
	jobs []fio.Job
}

func (f *fakeProbes) probes() Probes {
	return Probes{
		IOUring: func() error { return nil },
		LibAIO:  func() error { return nil },
		Docker: func(context.Context) (DockerInfo, error) {
			return DockerInfo{Host: "unix:///var/run/docker.sock", Version: "27.5.1", APIVersion: "1.47",
				StorageDriver: "overlay2", CgroupVersion: "2", Privileged: true}, nil
		},
		FIO: func(_ context.Context, job fio.Job) (fio.Result, error) {
			f.mu.Lock()
			f.jobs = append(f.jobs, job)
			f.mu.Unlock()
			// The reference's ceiling: 8.20 M IOPS at 512 B, 8.24 M at 4 K,
			// reached from 2048 reads in flight on.
			share := min(1, float64(job.Jobs*job.IODepth)/2048)
			r := fio.Result{Version: "fio-3.36", Engine: job.Engine, BlockBytes: job.BlockBytes, Jobs: job.Jobs, IODepth: job.IODepth, IOPS: 8.20e6 * share}
			if job.BlockBytes == 4096 {
				r.IOPS = 8.24e6 * share
			}
			r.BandwidthKiBps = r.IOPS * float64(job.BlockBytes) / 1024
			r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999 = 200, 600, 1200
			return r, nil
		},
	}
}

var fixedTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func runTree(t *testing.T, root string, mutate func(*Config)) (Report, string) {
	t.Helper()
	fp := &fakeProbes{}
	cfg := Config{Root: root, DataDir: testenv.MustDiskDir(t), Probes: fp.probes(), Now: func() time.Time { return fixedTime }}
	if mutate != nil {
		mutate(&cfg)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep, out.String()
}

func mustCheck(t *testing.T, rep Report, name string) Check {
	t.Helper()
	c, ok := rep.Check(name)
	if !ok {
		t.Fatalf("no %s check in %+v", name, rep.Checks)
	}
	return c
}

// copyTree copies a fake tree, symlinks included, so a test can break it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}
