package cpustat

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	tests := []struct {
		root      string
		want      Sample
		wantError string
	}{
		{"testdata/vm", Sample{TotalTicks: 26651 + 39539 + 392609 + 20612 + 9119 + 11586, StealTicks: 11586, IdleTicks: 392609 + 20612, HasSteal: true, PerCPU: map[int]Sample{
			0: {TotalTicks: 13587 + 22117 + 198341 + 11883 + 1728 + 4913, StealTicks: 4913, IdleTicks: 198341 + 11883, HasSteal: true},
			1: {TotalTicks: 13064 + 17422 + 194268 + 8729 + 7391 + 6673, StealTicks: 6673, IdleTicks: 194268 + 8729, HasSteal: true}}}, ""},
		{"testdata/old-kernel", Sample{TotalTicks: 4705 + 356 + 584 + 3699176 + 23060 + 10, IdleTicks: 3699176 + 23060, PerCPU: map[int]Sample{
			0: {TotalTicks: 4705 + 356 + 584 + 3699176 + 23060 + 10, IdleTicks: 3699176 + 23060}}}, ""},
		{"testdata/no-cpu", Sample{}, ErrNoCPULine.Error()},
		{"testdata/missing", Sample{}, "no such file"},
	}
	for _, tt := range tests {
		got, err := Read(tt.root)
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("Read(%s): got error %v, want one containing %q", tt.root, err, tt.wantError)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Read(%s): got %+v, %v, want %+v", tt.root, got, err, tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"short line", "cpu 1 2 3\n", "3 counters"},
		{"not a number", "cpu 1 2 x 4 5 6 7 8\n", "counter 3"},
		{"negative", "cpu 1 2 3 -4\n", "counter 4"},
		{"overflow", "cpu 18446744073709551615 1 0 0\n", "overflow"},
		{"per-CPU lines only", "cpu0 1 2 3 4\n", "no cpu line"},
		{"bad CPU number", "cpu 1 2 3 4\ncpux 1 2 3 4\n", "neither cpu nor cpuN"},
		{"negative CPU number", "cpu 1 2 3 4\ncpu-1 1 2 3 4\n", "neither cpu nor cpuN"},
		{"short CPU line", "cpu 1 2 3 4\ncpu1 1 2\n", "cpu1 line has 2 counters"},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Parse(nil); !errors.Is(err, ErrNoCPULine) {
		t.Errorf("empty /proc/stat: got %v, want ErrNoCPULine", err)
	}
}

func TestStealShare(t *testing.T) {
	s := func(total, steal uint64) Sample { return Sample{TotalTicks: total, StealTicks: steal, HasSteal: true} }
	tests := []struct {
		name          string
		before, after Sample
		want          float64
		wantError     string
	}{
		{"none stolen", s(1000, 5), s(1200, 5), 0, ""},
		{"2 % stolen", s(1000, 5), s(1200, 9), 0.02, ""},
		{"all stolen", s(0, 0), s(10, 10), 1, ""},
		{"no tick passed", s(1000, 5), s(1000, 5), 0, "no CPU tick"},
		{"backwards", s(1200, 9), s(1000, 5), 0, "backwards"},
		{"steal backwards", s(1000, 9), s(1200, 5), 0, "backwards"},
		{"no steal column", Sample{TotalTicks: 10}, Sample{TotalTicks: 20}, 0, "no steal column"},
	}
	for _, tt := range tests {
		got, err := tt.after.StealShare(tt.before)
		checkShare(t, tt.name, got, err, tt.want, tt.wantError)
	}
}

// checkShare holds a share and its error to the case's want: an error
// containing wantError where one is wanted, else want.
func checkShare(t *testing.T, name string, got float64, err error, want float64, wantError string) {
	t.Helper()
	switch {
	case wantError != "":
		if err == nil || !strings.Contains(err.Error(), wantError) {
			t.Errorf("%s: got %v, %v, want an error containing %q", name, got, err, wantError)
		}
	case err != nil || math.Abs(got-want) > 1e-12:
		t.Errorf("%s: got %v, %v, want %v", name, got, err, want)
	}
}

func TestBusyShare(t *testing.T) {
	s := func(total, idle, steal uint64) Sample {
		return Sample{TotalTicks: total, IdleTicks: idle, StealTicks: steal}
	}
	tests := []struct {
		name          string
		before, after Sample
		want          float64
		wantError     string
	}{
		{"idle", s(1000, 900, 0), s(1200, 1100, 0), 0, ""},
		{"busy", s(1000, 900, 0), s(1200, 900, 0), 1, ""},
		{"a quarter busy, a quarter stolen", s(1000, 900, 10), s(1200, 1000, 60), 0.25, ""},
		{"no steal column", Sample{TotalTicks: 10, IdleTicks: 5}, Sample{TotalTicks: 20, IdleTicks: 10}, 0.5, ""},
		{"no tick passed", s(1000, 900, 0), s(1000, 900, 0), 0, "no CPU tick"},
		{"idle backwards", s(1000, 900, 0), s(1200, 800, 0), 0, "backwards"},
		{"more idle than ticks", s(1000, 900, 0), s(1100, 950, 60), 0, "exceed"},
	}
	for _, tt := range tests {
		got, err := tt.after.BusyShare(tt.before)
		checkShare(t, tt.name, got, err, tt.want, tt.wantError)
	}
}

// TestReadLive reads this machine's /proc/stat twice: the counters move
// forward and the share is a share.
func TestReadLive(t *testing.T) {
	a, err := Read("/")
	if err != nil {
		t.Fatalf("Read(/): %v", err)
	}
	var b Sample
	for b = a; b.TotalTicks == a.TotalTicks; {
		if b, err = Read("/"); err != nil {
			t.Fatalf("Read(/): %v", err)
		}
	}
	if !a.HasSteal {
		t.Skip("this kernel prints no steal column")
	}
	if share, err := b.StealShare(a); err != nil || share < 0 || share > 1 {
		t.Errorf("StealShare over a live interval: got %v, %v, want a share in [0, 1]", share, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"cpu  1 2 3 4 5 6 7 8 9 10\n", "cpu 1 2 3 4\n", "cpu0 1\ncpu 9 9 9 9 9 9 9 18446744073709551615\n", "cpu\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if s.StealTicks+s.IdleTicks > s.TotalTicks {
			t.Fatalf("steal %d and idle %d ticks of a total of %d", s.StealTicks, s.IdleTicks, s.TotalTicks)
		}
		if _, err := s.StealShare(s); err == nil {
			t.Fatalf("a sample against itself gave a share: %+v", s)
		}
	})
}

// TestWatch: a watch over a tree it cannot read, or whose kernel counts
// no steal, gives nil; one over this host gives a share.
func TestWatch(t *testing.T) {
	for _, root := range []string{"testdata/missing", "testdata/old-kernel", "testdata/no-cpu"} {
		if got := StartWatch(root).StealShare(); got != nil {
			t.Errorf("StartWatch(%s): got share %v, want nil", root, *got)
		}
	}
	if s, err := Read("/"); err != nil || !s.HasSteal {
		t.Skipf("this host's /proc/stat gives no steal (%v)", err)
	}
	w := StartWatch("/")
	for a := w.before; ; {
		b, err := Read("/")
		if err != nil {
			t.Fatal(err)
		}
		if b.TotalTicks != a.TotalTicks {
			break
		}
	}
	if got := w.StealShare(); got == nil || *got < 0 || *got > 1 {
		t.Errorf("StartWatch(/): got %v, want a share in [0, 1]", got)
	}
	if got := w.End().Busy; got == nil || *got < 0 || *got > 1 {
		t.Errorf("StartWatch(/).End().Busy: got %v, want a share in [0, 1]", got)
	}
}

// TestOver: the steal of a set of CPUs is that of their own lines; a CPU
// without a line is an error.
func TestOver(t *testing.T) {
	before, err := Read("testdata/vm")
	if err != nil {
		t.Fatal(err)
	}
	after := before
	after.PerCPU = map[int]Sample{
		0: {TotalTicks: before.PerCPU[0].TotalTicks + 100, StealTicks: before.PerCPU[0].StealTicks + 25, HasSteal: true},
		1: {TotalTicks: before.PerCPU[1].TotalTicks + 100, StealTicks: before.PerCPU[1].StealTicks, HasSteal: true},
	}
	for _, tt := range []struct {
		cpus []int
		want float64
	}{{[]int{0}, 0.25}, {[]int{1}, 0}, {[]int{0, 1}, 0.125}} {
		a, aerr := after.Over(tt.cpus)
		b, berr := before.Over(tt.cpus)
		if aerr != nil || berr != nil {
			t.Fatalf("Over(%v): %v, %v", tt.cpus, aerr, berr)
		}
		if got, err := a.StealShare(b); err != nil || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("CPUs %v: got %v, %v, want %v", tt.cpus, got, err, tt.want)
		}
	}
	if _, err := before.Over([]int{0, 7}); err == nil || !strings.Contains(err.Error(), "CPU 7") {
		t.Errorf("Over a CPU without a line: got %v, want an error naming CPU 7", err)
	}
}
