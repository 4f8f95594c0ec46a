package hostcheck

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveThroughDMAndPartitions builds a small sysfs: LVM (dm-0) over
// a partition of an NVMe disk and a partition of a SATA disk, and an md
// mirror over dm-0 and a whole disk, and resolves each to physical disks.
func TestResolveThroughDMAndPartitions(t *testing.T) {
	root := t.TempDir()
	f := fakeTree{t, root}
	nvme := "sys/devices/pci0000_00/0000_00_01.0/nvme/nvme0/nvme0n1"
	sda := "sys/devices/pci0000_00/0000_00_17.0/ata1/host0/target0_0_0/0_0_0_0/block/sda"
	sdb := "sys/devices/pci0000_00/0000_00_17.0/ata2/host1/target1_0_0/1_0_0_0/block/sdb"
	dm := "sys/devices/virtual/block/dm-0"
	md := "sys/devices/virtual/block/md0"
	f.queue(nvme, 1000000, 512, 512, 0, "[none] mq-deadline")
	f.file(nvme+"/../model", "Samsung SSD 990 PRO 2TB")
	f.file(nvme+"/../firmware_rev", "4B2QJXD7")
	f.link(nvme+"/device", "sys/devices/pci0000_00/0000_00_01.0/nvme/nvme0")
	f.file(nvme+"/nvme0n1p2/partition", "2")
	f.file(nvme+"/nvme0n1p2/size", "900000")
	f.queue(sda, 2000000, 512, 4096, 1, "none [mq-deadline]")
	f.file(sda+"/device/model", "ST4000NM000A-2HZ")
	f.file(sda+"/device/rev", "SN04")
	f.file(sda+"/sda1/partition", "1")
	f.queue(sdb, 3000000, 4096, 4096, 0, "[none]")
	f.file(sdb+"/device/model", "Micron_5400")
	f.queue(dm, 1800000, 512, 4096, 0, "none")
	f.file(dm+"/dm/name", "vg0-data")
	f.link(dm+"/slaves/nvme0n1p2", nvme+"/nvme0n1p2")
	f.link(dm+"/slaves/sda1", sda+"/sda1")
	f.queue(md, 1800000, 4096, 4096, 0, "none")
	f.file(md+"/md/level", "raid1")
	f.link(md+"/slaves/dm-0", dm)
	f.link(md+"/slaves/sdb", sdb)
	tr := tree{root: root}
	tests := []struct {
		dir        string
		wantName   string
		wantPart   string
		wantDisks  string // name:model:firmware, sorted by slaves/ order
		wantDMName string
		wantLevel  string
	}{
		{nvme + "/nvme0n1p2", "nvme0n1", "nvme0n1p2", "nvme0n1:Samsung SSD 990 PRO 2TB:4B2QJXD7", "", ""},
		{dm, "dm-0", "", "nvme0n1:Samsung SSD 990 PRO 2TB:4B2QJXD7 sda:ST4000NM000A-2HZ:SN04", "vg0-data", ""},
		{md, "md0", "", "nvme0n1:Samsung SSD 990 PRO 2TB:4B2QJXD7 sda:ST4000NM000A-2HZ:SN04 sdb:Micron_5400:", "", "raid1"},
	}
	for _, tt := range tests {
		t.Run(tt.wantName, func(t *testing.T) {
			dev, disks, err := tr.resolveBlock(filepath.Join(root, tt.dir), 0)
			if err != nil {
				t.Fatalf("resolveBlock(%s): %v", tt.dir, err)
			}
			if dev.Name != tt.wantName || dev.Partition != tt.wantPart || dev.DMName != tt.wantDMName || dev.RAIDLevel != tt.wantLevel {
				t.Errorf("got device %+v, want %s partition %q dm %q level %q", dev, tt.wantName, tt.wantPart, tt.wantDMName, tt.wantLevel)
			}
			var got []string
			for _, d := range disks {
				got = append(got, d.Name+":"+d.Model+":"+d.FirmwareRev)
			}
			if strings.Join(got, " ") != tt.wantDisks {
				t.Errorf("got disks %q, want %q", strings.Join(got, " "), tt.wantDisks)
			}
		})
	}
	// A slave link pointing at itself must end with an error, not recurse forever.
	f.link(dm+"/slaves/dm-0", dm)
	if _, _, err := tr.resolveBlock(filepath.Join(root, dm), 0); err == nil || !strings.Contains(err.Error(), "deeper than 8") {
		t.Errorf("got %v for a cyclic slaves/ link, want a depth error", err)
	}
}
