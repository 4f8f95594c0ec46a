package docker

import (
	"slices"
	"testing"
)

// TestHostConfigOf: a server asks for a privileged container; once the
// engine has refused one, every later server runs unconfined with the
// capabilities it needs (an earlier createOf gave those to the retried
// server only, and the next ones ran with neither); a client is never
// privileged.
func TestHostConfigOf(t *testing.T) {
	for _, c := range []struct {
		privileged, unprivileged bool
		wantPrivileged, wantCaps bool
	}{
		{true, false, true, false},
		{true, true, false, true},
		{false, false, false, false},
		{false, true, false, false},
	} {
		h := hostConfigOf(containerSpec{privileged: c.privileged, binds: []string{"/d:/data"}, cpus: "1"}, c.unprivileged)
		caps := slices.Equal(h.CapAdd, serverCapabilities) && slices.Contains(h.SecurityOpt, "seccomp=unconfined")
		if h.Privileged != c.wantPrivileged || caps != c.wantCaps || h.NetworkMode != "host" || h.Resources.CpusetCpus != "1" || !slices.Equal(h.Binds, []string{"/d:/data"}) {
			t.Errorf("asked privileged %v, engine refused %v: got privileged %v, capabilities %q %q; want privileged %v, capabilities %v",
				c.privileged, c.unprivileged, h.Privileged, h.CapAdd, h.SecurityOpt, c.wantPrivileged, c.wantCaps)
		}
	}
}
