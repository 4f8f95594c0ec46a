package plan

import (
	"github.com/tierbench/tierbench/results"
)

// Record is the configuration as plan.json records it: its Workload,
// everything but what is never recorded (the password, the notes).
func (c Config) Record() results.Workload { return c.Workload }

// ConfigOf is the configuration a plan.json recorded, for --resume.
func ConfigOf(w results.Workload) Config { return Config{Workload: w} }

// CeilingApplies reports whether the fio ceiling of the data dir bounds
// the run's cells (results.Workload.CeilingApplies).
func CeilingApplies(cfg Config) bool { return cfg.Record().CeilingApplies() }

// FioPlanned reports whether the run measures fio on its data dir: the
// preflight's baseline, the ceiling's re-runs, the disk settle and fio's
// CPU per I/O. It is decided here once, from --no-fio and CeilingApplies,
// and handed to the packages that run fio as a value.
func FioPlanned(cfg Config) bool { return !cfg.NoFio && CeilingApplies(cfg) }
