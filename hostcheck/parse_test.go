package hostcheck

import (
	"fmt"
	"testing"
)

func TestParsers(t *testing.T) {
	cpuTests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0-55,112-167", "0-55,112-167", true}, {"0", "0", true}, {"", "", true}, {"3,1,2", "1-3", true},
		{"5-2", "", false}, {"a", "", false}, {"-1", "", false}, {"0-999999999", "", false},
	}
	for _, tt := range cpuTests {
		got, err := parseCPUList(tt.in)
		if (err == nil) != tt.ok || (err == nil && formatCPUList(got) != tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	mounts, err := parseMountinfo([]byte("36 35 98:0 /mnt1 /mnt\\040data rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"))
	if err != nil || len(mounts) != 1 || mounts[0].point != "/mnt data" || mounts[0].major != 98 || mounts[0].fsType != "ext3" {
		t.Errorf("parseMountinfo: got %+v, %v; want /mnt data on 98:0 ext3", mounts, err)
	}
	m, ok := mountOf([]mount{{point: "/"}, {point: "/var"}, {point: "/var/tmp"}, {point: "/var/tmpx"}}, "/var/tmp/a")
	if !ok || m.point != "/var/tmp" {
		t.Errorf("mountOf: got %q, want /var/tmp", m.point)
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-55,112-167", "0", "", "1,3-5", "9-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUList(s)
		if err != nil {
			return
		}
		again, err := parseCPUList(formatCPUList(cpus))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(cpus) {
			t.Fatalf("round trip of %q: got %v, %v; want %v", s, again, err, cpus)
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"))
	f.Add([]byte("36 35 98:0 /mnt1 /mnt\\040x rw - ext3 /dev/root rw\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mounts, err := parseMountinfo(b)
		if err == nil {
			mountOf(mounts, "/var/tmp")
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal: 1000 kB\nMemAvailable: 900 kB\n"))
	f.Add([]byte("Node 0 MemTotal:       24683652 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeminfo(b)
		if err != nil {
			return
		}
		for k, v := range m {
			if v < 0 {
				t.Fatalf("key %s: negative %d", k, v)
			}
		}
	})
}
