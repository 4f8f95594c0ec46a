package orchestrator

import (
	"github.com/tierbench/tierbench/results"
)

// workload is the configuration as plan.json records it. Each exported
// field is copied by name (TestWorkloadRecordsEveryField names one left out:
// it would not be in the bundle, and --resume would get its zero back).
func (c Config) workload() results.Workload {
	return results.Workload{
		Profile:       c.Profile,
		Scenario:      c.Scenario,
		Ladder:        c.Ladder,
		DBSize:        c.DBSize,
		KeyLength:     c.KeyLength,
		ValueLength:   c.ValueLength,
		Threads:       c.Threads,
		Batch:         c.Batch,
		CellSeconds:   c.CellSeconds,
		Passes:        c.Passes,
		WarmupSeconds: c.WarmupSeconds,
		LoadThreads:   c.LoadThreads,
		LoadBatch:     c.LoadBatch,
		Memory:        c.Memory,
		Page:          c.Page,
		Segment:       c.Segment,
		Index:         c.Index,
		Backends:      c.Backends,
		Pins:          c.Pins,
		DataDir:       c.DataDir,
		OutDir:        c.OutDir,
		Resume:        c.Resume,
		Runtime:       c.Runtime,
		Binary:        c.Binary,
		ServerHost:    c.ServerHost,
		ClientHosts:   c.ClientHosts,
		ServerBind:    c.ServerBind,
		ServerAddr:    c.ServerAddr,
		ServerPID:     c.ServerPID,
		ServerPIDs:    c.ServerPIDs,
		Shards:        c.Shards,
		DataDirs:      c.DataDirs,
		SkipLoad:      c.SkipLoad,
		Force:         c.Force,
		NoFio:         c.NoFio,
		FioSeconds:    c.FioSeconds,
		Silent:        c.Silent,
		StateDir:      c.StateDir,
		MaxMissRatio:  c.MaxMissRatio,
		KeepData:      c.KeepData,
		Latency:       c.Latency,
		Servers:       c.Servers,
		ServerCmd:     c.ServerCmd,
		ServerBin:     c.ServerBin,
		ServerImage:   c.ServerImage,
		Pull:          c.Pull,
		Given:         c.Given,
	}
}

// configOf is the configuration a plan.json recorded, for --resume.
func configOf(w results.Workload) Config {
	return Config{
		Profile:       w.Profile,
		Scenario:      w.Scenario,
		Ladder:        w.Ladder,
		DBSize:        w.DBSize,
		KeyLength:     w.KeyLength,
		ValueLength:   w.ValueLength,
		Threads:       w.Threads,
		Batch:         w.Batch,
		CellSeconds:   w.CellSeconds,
		Passes:        w.Passes,
		WarmupSeconds: w.WarmupSeconds,
		LoadThreads:   w.LoadThreads,
		LoadBatch:     w.LoadBatch,
		Memory:        w.Memory,
		Page:          w.Page,
		Segment:       w.Segment,
		Index:         w.Index,
		Backends:      w.Backends,
		Pins:          w.Pins,
		DataDir:       w.DataDir,
		OutDir:        w.OutDir,
		Resume:        w.Resume,
		Runtime:       w.Runtime,
		Binary:        w.Binary,
		ServerHost:    w.ServerHost,
		ClientHosts:   w.ClientHosts,
		ServerBind:    w.ServerBind,
		ServerAddr:    w.ServerAddr,
		ServerPID:     w.ServerPID,
		ServerPIDs:    w.ServerPIDs,
		Shards:        w.Shards,
		DataDirs:      w.DataDirs,
		SkipLoad:      w.SkipLoad,
		Force:         w.Force,
		NoFio:         w.NoFio,
		FioSeconds:    w.FioSeconds,
		Silent:        w.Silent,
		StateDir:      w.StateDir,
		MaxMissRatio:  w.MaxMissRatio,
		KeepData:      w.KeepData,
		Latency:       w.Latency,
		Servers:       w.Servers,
		ServerCmd:     w.ServerCmd,
		ServerBin:     w.ServerBin,
		ServerImage:   w.ServerImage,
		Pull:          w.Pull,
		Given:         w.Given,
	}
}

// ceilingApplies reports whether the fio ceiling of the data dir bounds
// the run's cells (results.Workload.CeilingApplies).
func ceilingApplies(cfg Config) bool { return cfg.workload().CeilingApplies() }
