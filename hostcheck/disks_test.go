package hostcheck

import (
	"os"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/internal/testenv"
)

// TestDataDisks resolves the real data dir's disks and finds each of them
// in the real /proc/diskstats.
func TestDataDisks(t *testing.T) {
	dir := testenv.MustDiskDir(t)
	disks, err := DataDisks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(disks) == 0 {
		t.Fatalf("got no disks below %s", dir)
	}
	if _, err := diskstats.Read("/", disks); err != nil {
		t.Errorf("got disks %v, not all in /proc/diskstats: %v", disks, err)
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		if _, err := DataDisks("/dev/shm"); err == nil || !strings.Contains(err.Error(), "/dev/shm") {
			t.Errorf("tmpfs: got %v, want an error naming the directory", err)
		}
	}
}
