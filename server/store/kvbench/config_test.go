package kvbench

import "testing"

func TestValidate(t *testing.T) {
	ok := DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no keys", func(c *Config) { c.DBSize = 0 }},
		{"short keys", func(c *Config) { c.DBSize, c.KeyLength = 1000, 2 }},
		{"no threads", func(c *Config) { c.Threads = nil }},
		{"zero threads", func(c *Config) { c.Threads = []int{0} }},
		{"mix not 100", func(c *Config) { c.RUMD = [4]int{50, 0, 0, 0} }},
		{"negative share", func(c *Config) { c.RUMD = [4]int{110, -10, 0, 0} }},
		{"verify with deletes", func(c *Config) { c.RUMD, c.Verify = [4]int{90, 0, 0, 10}, true }},
		{"theta", func(c *Config) { c.Zipf, c.Theta = true, 1 }},
		{"in flight", func(c *Config) { c.InFlight = 0 }},
		{"passes", func(c *Config) { c.Passes = 0 }},
		{"negative settle target", func(c *Config) { c.Settle, c.SettleTargetOpsPerSec = true, -1 }},
		{"settle target without settle", func(c *Config) { c.SettleTargetOpsPerSec = 1000 }},
		{"fio without a disk", func(c *Config) { c.CompareFio = true }},
		{"fio on localmemory", func(c *Config) {
			c.CompareFio, c.Store.StorageTier, c.Store.DeviceType, c.Store.LogDir = true, true, "localmemory", "/var/tmp"
		}},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
}
