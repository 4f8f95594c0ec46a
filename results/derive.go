package results

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/internal/human"
)

// Derive computes results.json's content from the bundle's raw records
// (plan.json, cells.jsonl, failures, preflight.json, ceilings.jsonl,
// latency.jsonl, hosts/), without writing anything: every verdict is
// judged again by this tierbench's rules, so a bundle can always be
// rendered again and checked (Verify). hostParagraph describes a host of
// a run across hosts from its preflight.json (nil when the bundle has
// none); nil leaves the paragraphs empty. Passes holds the pass records.
func Derive(dir string, hostParagraph func(preflight []byte) string) (Results, error) {
	var res Results
	var plan Plan
	if err := ReadJSON(dir, FilePlan, &plan); err != nil {
		return res, err
	}
	if plan.Schema > SchemaVersion {
		return res, fmt.Errorf("%w: %s: schema_version %d is newer than this tierbench's %d", ErrNewerSchema, dir, plan.Schema, SchemaVersion)
	}
	passes, loads, err := ReadCells(dir)
	if err != nil {
		return res, err
	}
	pre, _, err := ReadPreflight(dir)
	if err != nil {
		return res, err
	}
	fails, err := ReadFailures(dir)
	if err != nil {
		return res, err
	}
	ceilings := pre.Ceilings()
	if !plan.Workload.CeilingApplies() {
		ceilings = Ceilings{} // a disk the external server may never touch bounds nothing
	}
	fio := ceilings.Host.IOPS
	res = Results{Schema: SchemaVersion, Scenario: plan.Workload.ScenarioName(), Plan: plan, Finished: time.Now().UTC(), Loads: loads, Failures: fails,
		Cells: Aggregate(plan, passes, fails, fio), FioIOPS512: fio, Passes: passes}
	if ceilings.Host.IOPS > 0 {
		res.FioCeilings = &ceilings
	}
	if res.Ceilings, err = ReadCeilings(dir); err != nil {
		return res, err
	}
	if res.Latency, err = ReadLatency(dir); err != nil {
		return res, err
	}
	if res.Rechecks, err = ReadRechecks(dir); err != nil {
		return res, err
	}
	if res.FioCPU, err = ReadFioCPU(dir); err != nil {
		return res, err
	}
	ApplyCeilings(res.Cells, res.Ceilings, ceilings)
	res.Hosts, res.LinkWarnings = readHosts(dir, plan, passes, hostParagraph)
	return res, nil
}

// ApplyCeilings divides each cell by its own ceiling — its row's
// (ceilings.For: fio on the server's own CPUs for a pinned row, when
// measured, fio on the whole host otherwise), or the re-measurement at
// its depth when higher — and marks the cells still above it.
func ApplyCeilings(cells []Cell, recs []CeilingRecord, ceilings Ceilings) {
	if ceilings.Host.IOPS <= 0 {
		return
	}
	for i := range cells {
		c := &cells[i]
		if c.Passes == 0 {
			continue
		}
		var rec *CeilingRecord
		for j := range recs {
			if recs[j].Row == c.Row && recs[j].Threads == c.Threads {
				rec = &recs[j]
			}
		}
		base, pinned := ceilings.For(c.Row)
		c.Ceiling, c.CeilingPinned = base.IOPS, pinned
		if rec != nil && rec.Error == "" {
			c.Ceiling = max(base.IOPS, rec.IOPS)
		}
		c.FioShare = c.Median / c.Ceiling
		if c.Median <= AboveCeilingTolerance*c.Ceiling {
			continue
		}
		c.AboveCeiling = true
		c.AboveCeilingWhy = aboveWhy(*c, rec, base)
	}
}

// aboveWhy says by how much a cell exceeds its ceiling and why it can:
// first a ceiling that was fio's CPU rather than the disk's, then what
// the disk saw meanwhile.
func aboveWhy(c Cell, rec *CeilingRecord, base FioCeiling) string {
	which := "the sweep's ceiling"
	if c.CeilingPinned {
		which = fmt.Sprintf("the sweep's ceiling on the server's own CPUs %s", base.CPUs)
	}
	s := fmt.Sprintf("its median %s ops/s is %.1f %% of %s (%s IOPS)", human.Ops(c.Median), 100*c.Median/base.IOPS, which, human.Ops(base.IOPS))
	if base.Bound {
		s += fmt.Sprintf("; that ceiling is fio's CPU, not the disk's: fio's %d job(s) used %.0f %% of their %d CPU(s) at %.1f CPU µs per read",
			base.Jobs, 100*base.Share, base.CPUCount, base.MicrosPerRead)
		if c.ServerCPUMicrosPerGet > 0 {
			s += fmt.Sprintf(", and the server spent %.1f µs per GET", c.ServerCPUMicrosPerGet)
		}
		s += ", so a server cheaper per read than fio can pass it"
	}
	switch {
	case rec == nil:
		s += "; fio was not measured again at its depth (the row ended before, or this bundle predates it)"
	case rec.Error != "":
		s += "; fio at its depth failed: " + rec.Error
	default:
		s += fmt.Sprintf(" and %.1f %% of fio measured again at its own depth (%d reads in flight from %s, %d jobs × %d, over the server's %d files (%s), %s): %s IOPS",
			100*c.Median/rec.IOPS, rec.Depth, rec.DepthSource, rec.Jobs, rec.IODepth, rec.Files, rec.Footprint, human.Bytes(rec.FootprintBytes), human.Ops(rec.IOPS))
		if rec.CPUBound {
			s += fmt.Sprintf(", fio CPU-bound there too (%.0f %% of its CPUs, %.1f µs per read)", 100*rec.CPUShare, rec.CPUMicrosPerRead)
		}
	}
	switch {
	case c.DiskReadsPerSec <= 0:
		s += "; there is no disk evidence to tell where the reads went"
	case c.DiskReadsPerSec < MinSectorShare*c.Median:
		s += fmt.Sprintf("; the disk completed %s reads/s, %.2f per GET: some GETs did not reach it (served from the in-memory log or a cache above the disk)", human.Ops(c.DiskReadsPerSec), c.DiskReadsPerSec/c.Median)
	case base.Bound || rec != nil && rec.Error == "" && rec.CPUBound:
		s += fmt.Sprintf("; the disk completed %s reads/s (%.2f per GET) at depth %.0f: the reads were real", human.Ops(c.DiskReadsPerSec), c.DiskReadsPerSec/c.Median, c.DiskQueueDepth)
	default:
		s += fmt.Sprintf("; the disk completed %s reads/s (%.2f per GET) at depth %.0f: the reads were real, so fio's figure is low — ", human.Ops(c.DiskReadsPerSec), c.DiskReadsPerSec/c.Median, c.DiskQueueDepth)
		if fioSteal, cellSteal := ceilingSteal(rec, base), c.Steal(); stealTookFio(fioSteal, cellSteal) {
			s += fmt.Sprintf("the host was not quiet while fio ran: the hypervisor took %.1f %% of its CPU time (steal)", 100**fioSteal)
			if cellSteal != nil {
				s += fmt.Sprintf(", against %.1f %% during the cell", 100**cellSteal)
			}
			s += "; or the disk was shared with other work while fio ran, or it got faster between the two"
		} else {
			s += "the disk was shared with other work while fio ran, or it got faster between the two"
		}
	}
	return s + "."
}

// ceilingSteal is the steal while the fio a cell is divided by ran: the
// re-measurement's when it ran, else the sweep's.
func ceilingSteal(rec *CeilingRecord, base FioCeiling) *float64 {
	if rec != nil && rec.Error == "" && rec.StealShare != nil {
		return rec.StealShare
	}
	return base.StealShare
}

// stealTookFio reports whether the hypervisor took a noticeable share of
// the CPU time while fio ran and more than during the cell: then fio,
// not the cell, ran on a host that was not quiet.
func stealTookFio(fioSteal, cellSteal *float64) bool {
	return fioSteal != nil && *fioSteal >= NoticeableSteal && (cellSteal == nil || *fioSteal > *cellSteal)
}

// CellExtras adds to a cell the medians of its passes' CPU per op and,
// for a cluster, of every node's share.
func CellExtras(c *Cell, passes []PassRecord) {
	var cpu []float64
	for _, p := range passes {
		if p.CPUMicrosPerOp > 0 {
			cpu = append(cpu, p.CPUMicrosPerOp)
		}
	}
	c.CPUMicrosPerOp, _, _ = Median(cpu)
	var beside []float64
	for _, p := range passes {
		if p.FioBesideIOPS > 0 {
			beside = append(beside, p.OpsPerSec/p.FioBesideIOPS)
		}
	}
	c.BesideShare, _, _ = Median(beside)
	c.CellMix = mixCell(passes)
	byAddr := map[string][]NodePass{}
	var order []string
	for _, p := range passes {
		for _, n := range p.Nodes {
			if _, ok := byAddr[n.Addr]; !ok {
				order = append(order, n.Addr)
			}
			byAddr[n.Addr] = append(byAddr[n.Addr], n)
		}
	}
	for _, addr := range order {
		ns := byAddr[addr]
		var ops, rb, dr []float64
		for _, n := range ns {
			ops = append(ops, n.OpsPerSec)
			rb = append(rb, n.ReadBytesPerGet)
			dr = append(dr, n.DeviceReadsPerGet)
		}
		cn := CellNode{ID: ns[0].ID, Addr: addr, Keys: ns[0].Keys}
		cn.OpsPerSec, _, _ = Median(ops)
		cn.ReadBytesPerGet, _, _ = Median(rb)
		cn.DeviceReadsPerGet, _, _ = Median(dr)
		c.Nodes = append(c.Nodes, cn)
	}
}

// readHosts describes the hosts of a run from hosts/<name>/ and judges
// each client link against the rates its clients reached; nil for a run
// on one machine.
func readHosts(dir string, plan Plan, passes []PassRecord, hostParagraph func([]byte) string) ([]HostSummary, []string) {
	hp := plan.Hosts
	if hp == nil {
		return nil, nil
	}
	var hosts []HostSummary
	index := map[string]int{}
	add := func(ep HostEndpoint, role string) {
		if i, ok := index[ep.Name]; ok {
			hosts[i].Roles = append(hosts[i].Roles, role)
			return
		}
		index[ep.Name] = len(hosts)
		hosts = append(hosts, HostSummary{Name: ep.Name, Endpoint: ep.Display(), Roles: []string{role}})
	}
	add(hp.Server, "server")
	for _, c := range hp.Clients {
		add(c, "client")
	}
	for i := range hosts {
		h := &hosts[i]
		if hostParagraph != nil {
			raw, err := os.ReadFile(filepath.Join(dir, DirHosts, h.Name, FilePreflight))
			if err != nil {
				raw = nil
			}
			h.Paragraph = hostParagraph(raw)
		}
		var nc NetworkCheck
		if ReadJSON(filepath.Join(dir, DirHosts, h.Name), FileNetwork, &nc) == nil {
			h.Network = &nc
		}
	}
	return hosts, linkWarnings(hosts, passes)
}

// linkWarnings names every cell in which a client reached LinkBoundShare
// of its host's pipelined no-op rate.
func linkWarnings(hosts []HostSummary, passes []PassRecord) []string {
	var out []string
	for _, h := range hosts {
		if h.Network == nil || h.Network.NoopOps <= 0 {
			continue
		}
		worst, at := 0.0, ""
		for _, p := range passes {
			for _, c := range p.Clients {
				if c.Host == h.Name && c.OpsPerSec/h.Network.NoopOps > worst {
					worst, at = c.OpsPerSec/h.Network.NoopOps, fmt.Sprintf("%s %s t=%d pass %d", human.Title(p.Row.Backend), p.Row.Label, p.Threads, p.Pass)
				}
			}
		}
		if worst >= LinkBoundShare {
			out = append(out, fmt.Sprintf("host %s: its clients reached %.0f %% of the link's pipelined no-op rate (%s ops/s) in %s: the link, not the server, may have set that cell", h.Name, 100*worst, human.Ops(h.Network.NoopOps), at))
		}
	}
	return out
}
