package preflight

import (
	"io"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// Env is what the preflights need of the run: values that do not change
// while a preflight runs, so the facade builds one per call, and the two
// answers only the facade has (Foreign, BenchArgs).
type Env struct {
	// Config is the run's resolved configuration.
	Config plan.Config
	// FioPlanned says the host preflight measures the fio baseline
	// (plan.FioPlanned).
	FioPlanned bool
	// Bundle is the results bundle's directory: preflight.json and
	// fingerprint.json are written there (hosts/<name>/ across hosts).
	Bundle string
	// Measured says the bundle held preflight.json when the run began (a
	// resumed run's, measured when its bundle began): not measured again.
	Measured bool
	// Started says the run starts its servers (false for a server at
	// --server-addr): only then do the own server's checks stop the run.
	Started bool
	// Printf says progress on the run's stderr.
	Printf func(format string, a ...any)
	// Stderr takes the host preflight's own progress (the fio sweep's).
	Stderr io.Writer
	// Pinning is where a pinned row's server runs: the pinned fio
	// baseline runs on its CPUs.
	Pinning rig.Pinning
	// NUMANodes is how many memory nodes this host has.
	NUMANodes int
	// Driver is the runtime the servers and clients run in (Server and
	// Network only).
	Driver rig.Driver
	// Foreign says row's server is not tierbench's own, so that its image
	// holds no tierbench to run the preflight with (Server only).
	Foreign func(row results.Row) bool
	// BenchArgs are the flags every client of tgt takes (Network only).
	BenchArgs func(tgt target.Server) []string
}
