package preflight

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// dir is where the host preflight probes: the data dir, or, for a
// server at --server-addr whose data dir was not named, the bundle (the
// run must not create a data dir nobody asked for).
func (e Env) dir() string {
	if !e.Started && !e.Config.Explicit("data") {
		return e.Bundle
	}
	return e.Config.DataDir
}

// args tells preflight what the run plans, so its disk, memory and
// aio-budget checks judge this run and not the reference's defaults; fio
// adds the fio baseline's flags.
func (e Env) args(fio bool) []string {
	threads := make([]string, len(e.Config.Threads))
	for i, t := range e.Config.Threads {
		threads[i] = strconv.Itoa(t)
	}
	args := []string{"--dbsize", strconv.FormatInt(e.Config.DBSize, 10),
		"--threads", strings.Join(threads, ","), "--record-bytes", strconv.Itoa(results.RecordBytes(e.Config.KeyLength, e.Config.ValueLength))}
	if e.Started {
		args = append(args, "--memory", e.Config.LargestMemory(), "--index", e.Config.Index)
	}
	if fio {
		args = append(args, fioArgs(e.Config)...)
		args = append(args, e.pinnedFioArgs()...)
	}
	return args
}

// fioFiles is how many files the preflight ceiling spreads the dataset's
// footprint over, as the reference's fio does (8 files shared by all jobs).
const fioFiles = 8

// fioFootprintBytes is what the server reads (results.Workload.DatasetBytes).
func fioFootprintBytes(c plan.Config) int64 { return c.Record().DatasetBytes() }

// FioFileBytes is the size of the preflight's fio files in all, for the
// estimate of their layout.
func FioFileBytes(c plan.Config) int64 { return fioFiles * fioFileBytes(c) }

// fioFileBytes is each fio file's size: the dataset's footprint over
// fioFiles files, in whole MiB.
func fioFileBytes(c plan.Config) int64 {
	per := (fioFootprintBytes(c) + fioFiles - 1) / fioFiles
	return max((per+(1<<20)-1)&^((1<<20)-1), 1<<20)
}

// fioArgs are preflight's fio flags for the run c: files as large as the
// dataset in total, a sweep up to the server's throttle limit, every depth
// for the reference profile and an early stop otherwise.
func fioArgs(c plan.Config) []string {
	args := []string{"--fio", "--fio-files", strconv.Itoa(fioFiles), "--fio-size", strconv.FormatInt(fioFileBytes(c), 10),
		"--fio-max-depth", strconv.Itoa(device.DefaultThrottleLimit)}
	if c.FioSeconds > 0 {
		args = append(args, "--fio-runtime", strconv.Itoa(c.FioSeconds))
	}
	if c.Profile == plan.ProfileReference {
		args = append(args, "--fio-full-sweep")
	}
	return args
}

// pinnedFioArgs asks preflight for a second sweep with fio on the pinned
// server's own CPUs, when the run has a pinned row: that row's share is
// taken against fio with the same CPU budget, not fio on every CPU of the
// host. Its memory node is bound too where there is more than one node
// (on one node the binding changes nothing, and needs a fio built with
// libnuma).
func (e Env) pinnedFioArgs() []string {
	p := e.Pinning
	if !slices.Contains(e.Config.Pins, plan.PinPinned) || p.ServerCPUs == "" {
		return nil
	}
	args := []string{"--fio-cpus", p.ServerCPUs}
	if e.NUMANodes >= 2 && p.ServerMems != "" {
		args = append(args, "--fio-mems", p.ServerMems)
	}
	return args
}

// Sweeps is the fio sweeps the host preflight runs (args with fio), for
// the estimate: how many CPUs each runs on (the host's hostCPUs, then
// the pinned server's when a row is pinned), the deepest queue and
// whether every depth is run (else the sweep may stop early). None when
// the run measures no fio baseline.
func (e Env) Sweeps(hostCPUs int) (cpus []int, maxDepth int, full bool) {
	if !e.FioPlanned {
		return nil, 0, false
	}
	cpus = []int{hostCPUs}
	if e.pinnedFioArgs() != nil {
		pinned, _ := rig.ParseCPUList(e.Pinning.ServerCPUs)
		cpus = append(cpus, len(pinned))
	}
	return cpus, device.DefaultThrottleLimit, e.Config.Profile == plan.ProfileReference
}
