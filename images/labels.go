package images

import (
	"bytes"
	"debug/buildinfo"
	"strings"
)

// BuildArgs are the Dockerfile's VERSION and REVISION build arguments
// for the static binary bin, read from the build info the Go toolchain
// wrote into it: the main module's version and the VCS revision (with
// "-dirty" when the tree had changes). What the binary does not record
// is left out, and the Dockerfile's default, "unknown", labels it.
func BuildArgs(bin []byte) map[string]*string {
	args := map[string]*string{}
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return args
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		args["VERSION"] = &v
	}
	var revision string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if revision != "" {
		if dirty {
			revision += "-dirty"
		}
		args["REVISION"] = &revision
	}
	return args
}

// Labels are the OCI labels the Dockerfile sets, by name, so that tests
// and tools can read them back from an image.
var Labels = []string{
	"org.opencontainers.image.title",
	"org.opencontainers.image.source",
	"org.opencontainers.image.version",
	"org.opencontainers.image.revision",
}

// labelled reports whether the Dockerfile sets every label of Labels.
func labelled(dockerfile string) bool {
	for _, l := range Labels {
		if !strings.Contains(dockerfile, l+"=") {
			return false
		}
	}
	return true
}
