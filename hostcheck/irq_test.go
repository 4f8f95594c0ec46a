package hostcheck

import "testing"

func TestQueueInterrupt(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"virtio1-req.0", true},
		{"virtio1-config", false},
		{"nvme0q0", false},
		{"nvme0q1", true},
		{"nvme12q10", true},
		{"", false},
	} {
		if got := queueInterrupt(tt.name); got != tt.want {
			t.Errorf("queueInterrupt(%q): got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInterruptPhrase(t *testing.T) {
	nvme := BlockDevice{Name: "nvme0n1"}
	for q := range 8 {
		nvme.Interrupts = append(nvme.Interrupts, DiskInterrupt{IRQ: 40 + q, Name: "nvme0q" + string(rune('1'+q)), CPUs: []string{"0", "1", "2", "3", "4-5", "6", "7", "7"}[q]})
	}
	for _, tt := range []struct {
		name string
		d    BlockDevice
		want string
	}{
		{"none", BlockDevice{Name: "md1"}, ""},
		{"one", BlockDevice{Interrupts: []DiskInterrupt{{36, "virtio1-req.0", "1"}}}, "completions interrupt CPU 1 (IRQ 36 virtio1-req.0)"},
		{"affinity not read", BlockDevice{Interrupts: []DiskInterrupt{{36, "virtio1-req.0", ""}}}, "completions interrupt CPU unknown (IRQ 36 virtio1-req.0)"},
		{"many queues", nvme, "completions interrupt 8 queues' IRQs on CPUs 0-7"},
	} {
		if got := interruptPhrase(tt.d); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
