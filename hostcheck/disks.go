package hostcheck

import (
	"fmt"
	"os"
)

// DataDisks names the physical disks below dataDir as /proc/diskstats
// names them: the disk of its filesystem (a partition stepped up to its
// disk), or for md and dm the member disks, whose counters add up to the
// array's reads and depth. The error says what could not be resolved; a
// filesystem without a block device (tmpfs, overlay on nothing) is one.
// A dataDir that does not exist is created for the look and removed again.
func DataDisks(dataDir string) ([]string, error) {
	dir, created, st, err := prepareDataDir(dataDir)
	if created {
		defer os.Remove(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("hostcheck: %w", err)
	}
	s := tree{root: "/"}.describeStorage(dir, &st)
	if len(s.Disks) == 0 {
		note := s.Note
		if note == "" {
			note = fmt.Sprintf("%s on %s has no block device", s.FSType, s.Source)
		}
		return nil, fmt.Errorf("hostcheck: the disks below %s: %s", dir, note)
	}
	names := make([]string, len(s.Disks))
	for i, d := range s.Disks {
		names[i] = d.Name
	}
	return names, nil
}
