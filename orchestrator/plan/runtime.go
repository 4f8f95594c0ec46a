package plan

import "fmt"

// RuntimeChoice is the runtime a run starts its servers with: Name, and
// Fallback, the runtime to use instead where Name is unavailable here
// ("" for none: --runtime named it). Note says why Name differs from
// what --runtime asked, for the run to print.
type RuntimeChoice struct {
	Name, Fallback, Note string
}

// ChooseRuntime picks the runtime of a run on one machine; startsServers
// is false for a run that only measures a server already running, whose
// clients run here as processes.
func (c Config) ChooseRuntime(startsServers bool) RuntimeChoice {
	switch {
	case !startsServers:
		return RuntimeChoice{Name: RuntimeProcess}
	case c.Runtime == RuntimeAuto && c.ServerImage == "" && c.ForeignServers():
		return RuntimeChoice{Name: RuntimeProcess, Note: "--server starts a program of this host; --server-image runs it under Docker"}
	case c.MaxShards() > 1 && c.Runtime != RuntimeProcess:
		return RuntimeChoice{Name: RuntimeProcess, Note: fmt.Sprintf("--shards %s starts its shards as pinned processes", FormatInts(c.ShardCounts()))}
	case c.Runtime == RuntimeAuto:
		return RuntimeChoice{Name: RuntimeDocker, Fallback: RuntimeProcess}
	}
	return RuntimeChoice{Name: c.Runtime}
}

// ProcessesOnly says --runtime process: servers run as programs here.
func (c Config) ProcessesOnly() bool { return c.Runtime == RuntimeProcess }

// ContainersOnly says --runtime docker: servers run from images.
func (c Config) ContainersOnly() bool { return c.Runtime == RuntimeDocker }
