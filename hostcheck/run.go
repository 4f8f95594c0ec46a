package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/fio"
)

// Report is the outcome of Run: the checks in table order, the host
// fingerprint and the fio baseline (nil unless it ran and succeeded).
type Report struct {
	Checks      []Check      `json:"checks"`
	Fingerprint Fingerprint  `json:"fingerprint"`
	FIO         *FIOBaseline `json:"fio"`
	// FIOPinned is the same sweep with fio pinned to Config.FIOCPUs (and
	// FIOMems): the ceiling of a server given those CPUs alone; nil when
	// not asked for or when it failed.
	FIOPinned *FIOBaseline `json:"fio_pinned,omitempty"`
}

// FIOResult is one block size of the baseline.
type FIOResult struct {
	BlockBytes     int     `json:"block_bytes"`
	IOPS           float64 `json:"iops"`
	BandwidthKiBps float64 `json:"bw_kib_per_sec"`
	ClatUs         struct {
		P50  float64 `json:"p50"`
		P99  float64 `json:"p99"`
		P999 float64 `json:"p999"`
	} `json:"clat_us"`
	UsrCPU float64 `json:"usr_cpu"`
	SysCPU float64 `json:"sys_cpu"`
	// CPU is what fio's usr and sys say: CPU per read, the share of the
	// CPUs its jobs could use, and whether that made it CPU-bound.
	fio.CPU
}

// Failed reports whether any check failed.
func (r Report) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// Check returns the check called name, or false.
func (r Report) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// maxFIOJobs caps fio's numjobs as the reference does (32 jobs × QD64).
const maxFIOJobs = 32

// Run checks the host, fingerprints it and writes the table and the Host
// paragraph to w (or, with cfg.JSON, one JSON document and nothing else).
// Failed checks are in the Report, not the error: the error is for a
// Config that cannot run (wrapping ErrConfig) or a failed write to w.
func Run(ctx context.Context, cfg Config, w io.Writer) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	cfg = cfg.withDefaults()
	probes := cfg.Probes
	if probes.IOUring == nil {
		probes.IOUring = probeIOUring
	}
	if probes.LibAIO == nil {
		probes.LibAIO = probeLibAIO
	}
	if probes.Docker == nil {
		probes.Docker = probeDocker
	}
	if probes.FIO == nil {
		probes.FIO = fio.Run
	}
	t := tree{root: cfg.Root}
	var rep Report
	fp := &rep.Fingerprint
	fp.Time = cfg.Now().UTC()

	t.fingerprint(ctx, fp)
	nodes, err := t.readNUMA()
	fp.NUMANodes = nodes
	numa := numaCheck(nodes, err)
	if err == nil && fp.Sockets > 0 {
		numa.Detail = fmt.Sprintf("%d socket(s) × %d cores × %d thread(s) = %d logical CPUs; %s", fp.Sockets, fp.CoresPerSocket,
			fp.ThreadsPerCore, fp.LogicalCPUs, numa.Detail)
	}
	rep.Checks = append(rep.Checks, numa)

	aio, err := t.readAIO()
	fp.AIO = aio
	rep.Checks = append(rep.Checks, aioCheck(aio, err, cfg.Threads, cfg.QueueDepth))

	dir, created, st, dirErr := prepareDataDir(cfg.DataDir)
	if created {
		// Only an empty directory goes: anything fio or a user left stays.
		defer os.Remove(dir)
	}
	odirect := Check{Name: CheckODirect}
	if dirErr != nil {
		odirect.Status, odirect.Detail = Fail, dirErr.Error()
		fp.Storage = Storage{DataDir: cfg.DataDir, Note: dirErr.Error()}
	} else {
		fp.Storage = t.describeStorage(dir, &st)
		odirect = odirectCheck(dir, fp.Storage, st)
	}
	rep.Checks = append(rep.Checks, odirect)

	uring, uringOK := ioUringCheck(t, probes.IOUring)
	fp.IOUring = "available"
	if !uringOK {
		fp.IOUring = uring.Detail
	}
	rep.Checks = append(rep.Checks, uring, libaioCheck(probes.LibAIO))

	fioBytes := int64(0)
	if cfg.FIO {
		fioBytes = cfg.FIOFileBytes * int64(cfg.FIOFiles)
	}
	rep.Checks = append(rep.Checks, diskCheck(cfg, fp.Storage, dirErr, fioBytes))
	rep.Checks = append(rep.Checks, memoryCheck(t, cfg))

	dinfo, derr := probes.Docker(ctx)
	if derr == nil {
		fp.Docker = &dinfo
	}
	rep.Checks = append(rep.Checks, dockerCheck(dinfo, derr))

	var pinnedCheck *Check
	fioCheck := Check{Name: CheckFIO, Status: Warn, Detail: "not run: add --fio to measure the random-read ceiling every result is divided by"}
	if cfg.FIO {
		switch {
		case dirErr != nil || odirect.Status == Fail:
			fioCheck = Check{Name: CheckFIO, Status: Fail, Detail: "not run: the data dir failed the odirect check"}
		case fp.Storage.FreeBytes < fioBytes:
			fioCheck = Check{Name: CheckFIO, Status: Fail, Detail: fmt.Sprintf("not run: its %d files need %s and only %s is free in %s; lower --fio-size",
				cfg.FIOFiles, humanBytes(fioBytes), humanBytes(fp.Storage.FreeBytes), dir)}
		default:
			engine := "io_uring"
			if !uringOK {
				engine = "libaio"
			}
			cpus := fp.LogicalCPUs
			if cpus <= 0 {
				cpus = runtime.NumCPU()
			}
			job := fio.Job{Dir: dir, Files: cfg.FIOFiles, FileBytes: cfg.FIOFileBytes, Engine: engine, RuntimeSeconds: cfg.FIORuntimeSeconds}
			defer removeFioFiles(job)
			sampler := newDriverSampler(cfg.Root, fp.Storage, probes.FIO)
			if cfg.Progress != nil {
				// fio writes its files whole before the first step: minutes
				// at a large dataset, which would otherwise pass unsaid.
				fmt.Fprintln(cfg.Progress, layoutLine(job))
			}
			base, err := runBaseline(ctx, cfg.Root, sampler, job, cfg.FIOMaxDepth, min(maxFIOJobs, cpus), cfg.FIOFullSweep, cfg.Progress)
			fioCheck = baselineCheck(base, err)
			if err == nil {
				rep.FIO = base
			}
			if cfg.FIOCPUs != "" && err == nil {
				var c Check
				rep.FIOPinned, c = pinnedBaseline(ctx, sampler, job, cfg)
				pinnedCheck = &c
			}
		}
	}
	rep.Checks = append(rep.Checks, fioCheck)
	if pinnedCheck != nil {
		rep.Checks = append(rep.Checks, *pinnedCheck)
	}

	if cfg.JSON {
		return rep, writeJSON(w, rep)
	}
	return rep, writeText(w, rep)
}

// prepareDataDir makes the data dir when missing and statfs-es it.
func prepareDataDir(dir string) (abs string, created bool, st unix.Statfs_t, err error) {
	abs, err = filepath.Abs(dir)
	if err != nil {
		return dir, false, st, fmt.Errorf("data dir %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Directories made above it are the user's alone.
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return abs, false, st, fmt.Errorf("data dir %s does not exist and cannot be created: %w", abs, err)
		}
		if err := os.Mkdir(abs, 0o755); err != nil {
			return abs, false, st, fmt.Errorf("data dir %s does not exist and cannot be created: %w", abs, err)
		}
		created = true
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return abs, false, st, fmt.Errorf("data dir %s cannot be used: %w", abs, err)
	case !fi.IsDir():
		return abs, false, st, fmt.Errorf("data dir %s is not a directory", abs)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if err := unix.Statfs(abs, &st); err != nil {
		return abs, created, st, fmt.Errorf("statfs data dir %s: %w", abs, err)
	}
	if err := unix.Access(abs, unix.W_OK); err != nil {
		return abs, created, st, fmt.Errorf("data dir %s is not writable: %w", abs, err)
	}
	return abs, created, st, nil
}

// odirectCheck refuses memory-backed filesystems outright (Linux 6.6+
// tmpfs accepts O_DIRECT, but reads never reach a device), then really
// writes and reads back aligned blocks.
func odirectCheck(dir string, s Storage, st unix.Statfs_t) Check {
	c := Check{Name: CheckODirect}
	if st.Type == magicTmpfs || st.Type == magicRamfs || s.FSType == "tmpfs" || s.FSType == "ramfs" {
		fs := fsMagicNames[int64(st.Type)]
		if fs == "" {
			fs = s.FSType
		}
		c.Status, c.Detail = Fail, fmt.Sprintf("data dir %s is on %s: reads there are served from memory, never from a device, so no number measured there is storage-bound; choose a directory on a disk filesystem such as ext4 or xfs", dir, fs)
		return c
	}
	block := 0
	if s.Device != nil {
		block = s.Device.LogicalBlockBytes
	}
	if err := probeODirect(dir, block); err != nil {
		c.Status, c.Detail = Fail, fmt.Sprintf("%v: the filesystem %s refuses O_DIRECT; choose a directory on ext4 or xfs", err, s.FSType)
		return c
	}
	c.Status = Pass
	c.Detail = "O_DIRECT write and read-back of 8 KiB ok; " + describeStorageLine(s)
	if s.Note != "" {
		c.Status = Warn
		c.Detail += "; " + s.Note
	}
	return c
}

// describeStorageLine is the one-line account of the data dir's storage.
func describeStorageLine(s Storage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s mounted at %s (%s)", s.FSType, s.Source, s.MountPoint, s.MountOptions)
	if d := s.Device; d != nil {
		fmt.Fprintf(&b, "; device %s", d.Name)
		if d.Partition != "" {
			fmt.Fprintf(&b, " (partition %s)", d.Partition)
		}
		if d.RAIDLevel != "" {
			fmt.Fprintf(&b, " md %s, %s chunks", d.RAIDLevel, humanBytes(d.ChunkBytes))
		}
		if d.DMName != "" {
			fmt.Fprintf(&b, " dm %s", d.DMName)
		}
		fmt.Fprintf(&b, ", %s", decimalBytes(d.SizeBytes))
		if len(s.Disks) > 1 || (len(s.Disks) == 1 && s.Disks[0].Name != d.Name) {
			fmt.Fprintf(&b, "; over %d disks: %s", len(s.Disks), diskGroups(s.Disks))
		} else {
			fmt.Fprintf(&b, ": %s", diskFacts(*d))
		}
		for _, disk := range s.Disks {
			if p := interruptPhrase(disk); p != "" {
				fmt.Fprintf(&b, "; %s's %s", disk.Name, p)
			}
		}
	}
	return b.String()
}

func diskFacts(d BlockDevice) string {
	rot := "non-rotational"
	if d.Rotational {
		rot = "rotational"
	}
	model := d.Model
	if model == "" {
		model = "model unknown"
	}
	fw := ""
	if d.FirmwareRev != "" {
		fw = " firmware " + d.FirmwareRev
	}
	queue := ""
	if d.HWQueues > 0 {
		queue = fmt.Sprintf(", %d hardware queue(s) taking %d requests at once", d.HWQueues, d.QueueTags)
		if d.QueueRequests > 0 && d.Scheduler != "" && d.Scheduler != "none" {
			queue += fmt.Sprintf(" (%d a queue with the scheduler)", d.QueueRequests)
		}
	}
	return fmt.Sprintf("%s%s, %d/%d B logical/physical blocks, %s, scheduler %s%s", model, fw,
		d.LogicalBlockBytes, d.PhysicalBlockBytes, rot, d.Scheduler, queue)
}

// diskGroups collapses identical disks: "8× nvme0n1…nvme7n1 KIOXIA … ".
func diskGroups(disks []BlockDevice) string {
	type group struct {
		names []string
		d     BlockDevice
	}
	var groups []*group
	for _, d := range disks {
		key := diskFacts(d) + decimalBytes(d.SizeBytes)
		found := false
		for _, g := range groups {
			if diskFacts(g.d)+decimalBytes(g.d.SizeBytes) == key {
				g.names = append(g.names, d.Name)
				found = true
			}
		}
		if !found {
			groups = append(groups, &group{names: []string{d.Name}, d: d})
		}
	}
	var parts []string
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%d× %s %s (%s)", len(g.names), decimalBytes(g.d.SizeBytes),
			diskFacts(g.d), strings.Join(g.names, " ")))
	}
	return strings.Join(parts, "; ")
}

// roundUp8 is the record size the log stores: records are 8-byte aligned.
func roundUp8(n int) int64 { return (int64(n) + 7) &^ 7 }

// datasetBytes is what the planned load writes to the data dir: every
// record 8-byte aligned, plus one in-memory log's worth flushed behind it.
func datasetBytes(cfg Config) int64 {
	return cfg.DBSize*roundUp8(cfg.RecordBytes) + cfg.MemoryBytes
}

func diskCheck(cfg Config, s Storage, dirErr error, fioBytes int64) Check {
	c := Check{Name: CheckDiskSpace}
	if dirErr != nil {
		c.Status, c.Detail = Fail, "cannot measure free space: "+dirErr.Error()
		return c
	}
	need := datasetBytes(cfg) + fioBytes
	detail := fmt.Sprintf("%s free of %s on %s; the planned dataset needs %s (%d records × %d B rounded to 8, plus %s log memory",
		humanBytes(s.FreeBytes), humanBytes(s.TotalBytes), s.DataDir, humanBytes(need), cfg.DBSize, roundUp8(cfg.RecordBytes), humanBytes(cfg.MemoryBytes))
	if fioBytes > 0 {
		detail += fmt.Sprintf(", plus %s of fio files", humanBytes(fioBytes))
	}
	detail += ")"
	if s.FreeBytes < need {
		c.Status, c.Detail = Fail, detail+": not enough space"
		return c
	}
	c.Status, c.Detail = Pass, detail
	return c
}

// memoryCheck compares the planned index + log memory with MemAvailable
// (fail beyond MemTotal, warn beyond what is available now).
func memoryCheck(t tree, cfg Config) Check {
	c := Check{Name: CheckMemory}
	m, err := t.meminfo("/proc/meminfo", "MemTotal", "MemAvailable")
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	need := cfg.IndexBytes + cfg.MemoryBytes
	detail := fmt.Sprintf("%s available of %s; planned index %s + log memory %s = %s",
		humanBytes(m["MemAvailable"]), humanBytes(m["MemTotal"]), humanBytes(cfg.IndexBytes), humanBytes(cfg.MemoryBytes), humanBytes(need))
	switch {
	case need > m["MemTotal"]:
		c.Status, c.Detail = Fail, detail+": more than the host has"
	case need > m["MemAvailable"]:
		c.Status, c.Detail = Warn, detail+": more than is available now; the kernel will reclaim page cache or swap"
	default:
		c.Status, c.Detail = Pass, detail
	}
	return c
}
