package ceiling

import "github.com/tierbench/tierbench/orchestrator/plan"

// Env is what the fio measurements need of the run: values that do not
// change while one of them runs, so the facade builds one per call.
type Env struct {
	// Config is the run's resolved configuration: its data dir (whose
	// files fio reads) and thread counts.
	Config plan.Config
	// FioPlanned says the run measures fio at all (plan.FioPlanned):
	// without it nothing here runs fio.
	FioPlanned bool
	// Bundle is the results bundle's directory: preflight.json is read
	// there, ceilings.jsonl and fio-cpu.jsonl appended to.
	Bundle string
	// Printf says progress on the run's stderr.
	Printf func(format string, a ...any)
}
