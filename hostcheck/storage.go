package hostcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Storage describes where the data dir lives, from the filesystem down to
// the physical disks.
type Storage struct {
	DataDir      string `json:"data_dir"`
	MountPoint   string `json:"mount_point"`
	FSType       string `json:"fs_type"`
	MountOptions string `json:"mount_options"`
	Source       string `json:"source"` // e.g. /dev/md1
	FreeBytes    int64  `json:"free_bytes"`
	TotalBytes   int64  `json:"total_bytes"`
	// Device is the block device the filesystem sits on (after stepping from
	// a partition to its disk); nil for filesystems with no block device.
	Device *BlockDevice `json:"device"`
	// Disks are the physical disks below Device: through md and dm slaves.
	Disks []BlockDevice `json:"disks"`
	// Note says what could not be resolved, naming the sysfs path.
	Note string `json:"note,omitempty"`
}

// BlockDevice is one entry of /sys/block.
type BlockDevice struct {
	Name               string `json:"name"`
	Partition          string `json:"partition,omitempty"` // the partition the filesystem is on, if any
	SizeBytes          int64  `json:"size_bytes"`
	LogicalBlockBytes  int    `json:"logical_block_bytes"`
	PhysicalBlockBytes int    `json:"physical_block_bytes"`
	Rotational         bool   `json:"rotational"`
	Scheduler          string `json:"scheduler"`
	Model              string `json:"model,omitempty"`
	FirmwareRev        string `json:"firmware_rev,omitempty"`
	RAIDLevel          string `json:"raid_level,omitempty"`  // md only, e.g. raid0
	ChunkBytes         int64  `json:"chunk_bytes,omitempty"` // md only
	DMName             string `json:"dm_name,omitempty"`     // dm only
	// HWQueues and QueueTags are the device's blk-mq hardware queues and
	// their tags in all (mq/N/nr_tags): how many requests it takes at
	// once. QueueRequests is queue/nr_requests, what each queue holds with
	// a scheduler: requests past the tags wait there, in the kernel, and
	// keep the device busy as others complete. 0 where not read (md, dm).
	HWQueues      int `json:"hw_queues,omitempty"`
	QueueTags     int `json:"queue_tags,omitempty"`
	QueueRequests int `json:"queue_requests,omitempty"`
	// Interrupts are the disk's queue interrupts and the CPUs they are
	// delivered to (diskInterrupts); none for md and dm.
	Interrupts []DiskInterrupt `json:"interrupts,omitempty"`
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	point, fsType, source, options string
	major, minor                   uint32
}

// unescapeMount undoes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseMountinfo reads /proc/self/mountinfo lines.
func parseMountinfo(data []byte) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		pre, post, ok := strings.Cut(text, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 2 {
			return nil, fmt.Errorf("line %d %q: not a mountinfo line", line, clip(text))
		}
		maj, min, ok := strings.Cut(f[2], ":")
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: device %q is not major:minor", line, clip(f[2]))
		}
		m := mount{point: unescapeMount(f[4]), options: f[5], fsType: g[0], source: unescapeMount(g[1]),
			major: uint32(a), minor: uint32(b)}
		if len(g) > 2 {
			m.options += "; superblock " + g[2]
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// mountOf picks the mount holding path: the longest mount point that is a
// prefix of it; the last such line wins because later mounts hide earlier ones.
func mountOf(mounts []mount, path string) (mount, bool) {
	best, found := mount{}, false
	for _, m := range mounts {
		p := m.point
		if path == p || p == "/" || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			if !found || len(p) >= len(best.point) {
				best, found = m, true
			}
		}
	}
	return best, found
}

// Filesystem magic numbers of statfs(2) that matter to O_DIRECT.
const (
	magicTmpfs = 0x01021994
	magicRamfs = 0x858458f6
)

var fsMagicNames = map[int64]string{
	0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", magicTmpfs: "tmpfs", magicRamfs: "ramfs",
	0x794c7630: "overlay", 0x2fc12fc1: "zfs", 0xF2F52010: "f2fs", 0x6969: "nfs", 0x65735546: "fuse",
}

// describeStorage fills what sysfs and mountinfo say about the data dir.
// Failures to resolve the block device go into Note; they do not stop the
// O_DIRECT probe, which is the real proof.
func (t tree) describeStorage(dataDir string, st *unix.Statfs_t) Storage {
	s := Storage{DataDir: dataDir, FreeBytes: int64(st.Bavail) * st.Bsize, TotalBytes: int64(st.Blocks) * st.Bsize}
	s.FSType = fsMagicNames[int64(st.Type)]
	const mi = "/proc/self/mountinfo"
	data, err := os.ReadFile(t.path(mi))
	if err != nil {
		s.Note = fmt.Sprintf("read %s: %v", t.where(mi), err)
		return s
	}
	mounts, err := parseMountinfo(data)
	if err != nil {
		s.Note = fmt.Sprintf("read %s: %v", t.where(mi), err)
		return s
	}
	m, ok := mountOf(mounts, dataDir)
	if !ok {
		s.Note = fmt.Sprintf("%s: no mount holds %s", t.where(mi), dataDir)
		return s
	}
	s.MountPoint, s.MountOptions, s.Source = m.point, m.options, m.source
	if s.FSType == "" || t.root != "/" {
		s.FSType = m.fsType
	}
	if m.major == 0 {
		return s // tmpfs, overlay, nfs: no block device
	}
	dir, err := t.blockDir(m.major, m.minor)
	if err != nil {
		s.Note = err.Error()
		return s
	}
	dev, disks, err := t.resolveBlock(dir, 0)
	if err != nil {
		s.Note = err.Error()
	}
	s.Device, s.Disks = dev, disks
	return s
}

// blockDir finds the sysfs directory of block device major:minor: through
// /sys/dev/block/M:m, or else by the dev file of each /sys/class/block
// entry (which keeps ':' out of the fake trees' file names).
func (t tree) blockDir(major, minor uint32) (string, error) {
	id := fmt.Sprintf("%d:%d", major, minor)
	if dir, err := filepath.EvalSymlinks(t.path("/sys/dev/block/" + id)); err == nil {
		return dir, nil
	}
	const class = "/sys/class/block"
	entries, err := os.ReadDir(t.path(class))
	if err != nil {
		return "", fmt.Errorf("find block device %s: list %s: %v", id, t.where(class), err)
	}
	for _, e := range entries {
		dev, err := t.string(class + "/" + e.Name() + "/dev")
		if err != nil || dev != id {
			continue
		}
		dir, err := filepath.EvalSymlinks(t.path(class + "/" + e.Name()))
		if err != nil {
			return "", fmt.Errorf("resolve %s: %v", t.where(class+"/"+e.Name()), err)
		}
		return dir, nil
	}
	return "", fmt.Errorf("find block device %s: neither /sys/dev/block/%s nor a %s entry with that dev (under %s)", id, id, class, t.root)
}

// resolveBlock reads the device at sysfs directory dir, steps from a
// partition to its disk, and follows slaves/ (md, dm) down to the physical
// disks. depth bounds a cyclic fake tree.
func (t tree) resolveBlock(dir string, depth int) (*BlockDevice, []BlockDevice, error) {
	if depth > 8 {
		return nil, nil, fmt.Errorf("resolve %s: slaves nest deeper than 8 levels", t.hostPath(dir))
	}
	partition := ""
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		partition = filepath.Base(dir)
		dir = filepath.Dir(dir)
	}
	dev, err := t.readBlock(dir)
	if err != nil {
		return nil, nil, err
	}
	dev.Partition = partition
	slaves, _ := os.ReadDir(filepath.Join(dir, "slaves"))
	if len(slaves) == 0 {
		return dev, []BlockDevice{*dev}, nil
	}
	var disks []BlockDevice
	for _, sl := range slaves {
		link := filepath.Join(dir, "slaves", sl.Name())
		sub, err := filepath.EvalSymlinks(link)
		if err != nil {
			return dev, disks, fmt.Errorf("resolve %s: %v", t.hostPath(link), err)
		}
		_, leaves, err := t.resolveBlock(sub, depth+1)
		disks = append(disks, leaves...)
		if err != nil {
			return dev, disks, err
		}
	}
	return dev, disks, nil
}

// hostPath turns a path inside the tree back into the path the host sees.
func (t tree) hostPath(p string) string {
	rel, err := filepath.Rel(t.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + rel
}

// readBlock reads the queue and identity files of one block device.
func (t tree) readBlock(dir string) (*BlockDevice, error) {
	hp := t.hostPath(dir)
	d := &BlockDevice{Name: filepath.Base(dir)}
	sectors, err := t.int64(hp + "/size")
	if err != nil {
		return nil, err
	}
	d.SizeBytes = sectors * 512
	lbs, err := t.int64(hp + "/queue/logical_block_size")
	if err != nil {
		return nil, err
	}
	pbs, err := t.int64(hp + "/queue/physical_block_size")
	if err != nil {
		return nil, err
	}
	if lbs < 512 || lbs > 1<<16 || lbs&(lbs-1) != 0 || pbs < lbs || pbs > 1<<20 {
		return nil, fmt.Errorf("read %s: logical %d B and physical %d B are not block sizes", t.where(hp+"/queue"), lbs, pbs)
	}
	d.LogicalBlockBytes, d.PhysicalBlockBytes = int(lbs), int(pbs)
	rot, err := t.int64(hp + "/queue/rotational")
	if err != nil {
		return nil, err
	}
	d.Rotational = rot != 0
	if sched, err := t.string(hp + "/queue/scheduler"); err == nil {
		d.Scheduler = activeScheduler(sched)
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "mq")); err == nil {
		for _, e := range entries {
			if n, err := t.int64(hp + "/mq/" + e.Name() + "/nr_tags"); err == nil && n > 0 {
				d.HWQueues++
				d.QueueTags += int(n)
			}
		}
	}
	if n, err := t.int64(hp + "/queue/nr_requests"); err == nil && n > 0 {
		d.QueueRequests = int(n)
	}
	d.Model, _ = t.string(hp + "/device/model")
	if d.Model == "" {
		if drv, err := os.Readlink(filepath.Join(dir, "device", "driver")); err == nil {
			d.Model = filepath.Base(drv) // virtio_blk has no model file
		}
	}
	d.FirmwareRev, _ = t.string(hp + "/device/firmware_rev")
	if d.FirmwareRev == "" {
		d.FirmwareRev, _ = t.string(hp + "/device/rev") // SCSI and SATA
	}
	if t.exists(hp + "/md") {
		d.RAIDLevel, _ = t.string(hp + "/md/level")
		if chunk, err := t.int64(hp + "/md/chunk_size"); err == nil {
			d.ChunkBytes = chunk
		}
	}
	if t.exists(hp + "/dm") {
		d.DMName, _ = t.string(hp + "/dm/name")
	}
	d.Interrupts = t.diskInterrupts(dir)
	return d, nil
}

// activeScheduler picks the bracketed entry of queue/scheduler.
func activeScheduler(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// odirectProbeBytes is how much the probe writes and reads back: two
// 4 KiB blocks, aligned for every logical block size up to 4 KiB.
const odirectProbeBytes = 8192

// probeODirect really opens a file in dir with O_DIRECT, writes aligned
// blocks, reads them back, compares, and removes the file. blockBytes
// raises the alignment for devices with logical blocks above 4 KiB.
func probeODirect(dir string, blockBytes int) error {
	n := odirectProbeBytes
	if blockBytes > n/2 {
		n = 2 * blockBytes
	}
	// An anonymous mapping is page-aligned and outside the Go heap, which
	// satisfies O_DIRECT's buffer alignment for blocks up to the page size;
	// larger blocks are multiples of the page size and so aligned too.
	mem, err := unix.Mmap(-1, 0, 2*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return fmt.Errorf("map %d B probe buffer: %w", 2*n, err)
	}
	defer unix.Munmap(mem)
	wbuf, rbuf := mem[:n], mem[n:]
	for i := range wbuf {
		wbuf[i] = byte(i*7 + i>>9 + 1)
	}
	if uintptr(unsafe.Pointer(&wbuf[0]))%4096 != 0 {
		return errors.New("probe buffer is not 4 KiB aligned")
	}
	path := filepath.Join(dir, fmt.Sprintf(".tierbench-odirect-%d", os.Getpid()))
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("open %s with O_DIRECT: %w", path, err)
	}
	defer unix.Unlink(path)
	defer unix.Close(fd)
	if w, err := unix.Pwrite(fd, wbuf, 0); err != nil || w != n {
		return fmt.Errorf("write %d B with O_DIRECT to %s: wrote %d: %v", n, path, w, err)
	}
	if r, err := unix.Pread(fd, rbuf, 0); err != nil || r != n {
		return fmt.Errorf("read back %d B with O_DIRECT from %s: read %d: %v", n, path, r, err)
	}
	if !bytes.Equal(wbuf, rbuf) {
		return fmt.Errorf("read back from %s with O_DIRECT: data differs from what was written", path)
	}
	return nil
}
