package main

import (
	"fmt"
	"runtime/debug"
)

// versionString reports the module version and VCS state recorded by the Go
// toolchain at build time.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "tierbench (no build info)"
	}
	rev, dirty := "unknown", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (dirty)"
			}
		}
	}
	return fmt.Sprintf("tierbench %s revision %s%s %s", info.Main.Version, rev, dirty, info.GoVersion)
}
