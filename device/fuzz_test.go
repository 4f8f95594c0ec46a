package device

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzSegmentNumber: names found in a directory are outside bytes.
func FuzzSegmentNumber(f *testing.F) {
	for _, s := range []string{"segment.0", "segment.12", "segment.007", "segment.-1", "segment.", "segment.1e3", "x.1", "segment.99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := segmentNumber(name)
		if !ok {
			return
		}
		if n >= maxSegmentFiles {
			t.Fatalf("segmentNumber(%q) = %d, beyond maxSegmentFiles", name, n)
		}
		if want := "segment." + strconv.FormatUint(n, 10); want != name {
			t.Fatalf("segmentNumber(%q) = %d, which names %q", name, n, want)
		}
	})
}

// FuzzLogicalBlockSize: sysfs contents are outside bytes.
func FuzzLogicalBlockSize(f *testing.F) {
	for _, s := range []string{"512\n", "4096", " 4096 \n", "0", "-512", "4000", "abc", "", "1099511627776"} {
		f.Add(s)
	}
	root := f.TempDir()
	q := filepath.Join(root, "dev", "block", "1:2", "queue")
	if err := os.MkdirAll(q, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, contents string) {
		if err := os.WriteFile(filepath.Join(q, "logical_block_size"), []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := LogicalBlockSize(root, 1, 2)
		if err != nil {
			return
		}
		if n < 512 || n&(n-1) != 0 {
			t.Fatalf("LogicalBlockSize of %q = %d, not a power of two ≥ 512", contents, n)
		}
	})
}
