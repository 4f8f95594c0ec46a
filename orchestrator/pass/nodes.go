package pass

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// What the run asks of every node of a row's target alike: how many of
// the keys it must hold, which sampled keys it is asked for, and its
// counters around a pass.

// slotOwners maps every slot to the index of the node serving it, -1 for
// none.
func slotOwners(nodes []*target.Node) *[slots.Count]int {
	var owner [slots.Count]int
	for i := range owner {
		owner[i] = -1
	}
	for i, n := range nodes {
		for _, rg := range n.Ranges {
			for s := int(rg.Start); s <= int(rg.End); s++ {
				owner[s] = i
			}
		}
	}
	return &owner
}

// expectedKeys is how many of the keys 0..dbsize-1, spelled as the client
// spells them, each node's slots hold: what its DBSIZE must be.
func expectedKeys(nodes []*target.Node, dbsize int64, keyLength int) []int64 {
	owner := slotOwners(nodes)
	out := make([]int64, len(nodes))
	key := make([]byte, keyLength)
	for k := int64(0); k < dbsize; k++ {
		keyspace.PutKey(key, uint64(k))
		if o := owner[slots.Of(key)]; o >= 0 {
			out[o]++
		}
	}
	return out
}

// wantKeys is what each node's DBSIZE must be: every key for a server
// that is not a cluster node, its slots' share for a cluster's.
func wantKeys(tgt target.Server, dbsize int64, keyLength int) []int64 {
	if !tgt.Cluster {
		return []int64{dbsize}
	}
	return expectedKeys(tgt.Nodes, dbsize, keyLength)
}

// sampleTarget runs the sampled GET check: a uniform sample over the
// whole key space, each key read from the node serving its slot. A
// server that is not a cluster node draws the sample where it runs (its
// probe may be on another host); a cluster's keys are drawn here and
// split by slot, and each node's share is kept in rec.Nodes.
func sampleTarget(ctx context.Context, cfg plan.Config, tgt target.Server, rec *results.LoadRecord) (results.SampleCheck, error) {
	if !tgt.Cluster {
		return tgt.First().Probe.Sample(ctx, cfg, nil)
	}
	owner := slotOwners(tgt.Nodes)
	keys := rig.SampleKeys(cfg.DBSize, rig.MinSampleKeys, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x636c7573746572)))
	per := make([][]uint64, len(tgt.Nodes))
	key := make([]byte, cfg.KeyLength)
	var total results.SampleCheck
	for _, k := range keys {
		keyspace.PutKey(key, k)
		o := owner[slots.Of(key)]
		if o < 0 {
			total.Keys++
			total.Errors++
			if total.FirstBad == "" {
				total.FirstBad = fmt.Sprintf("key %s: slot %d is served by no node", key, slots.Of(key))
			}
			continue
		}
		per[o] = append(per[o], k)
	}
	start := time.Now()
	for i, n := range tgt.Nodes {
		s, err := n.Probe.Sample(ctx, cfg, per[i])
		if err != nil {
			return total, err
		}
		if i < len(rec.Nodes) {
			rec.Nodes[i].Sample = &s
		}
		total.Keys += s.Keys
		total.Missed += s.Missed
		total.WrongLength += s.WrongLength
		total.Errors += s.Errors
		if total.FirstBad == "" && s.FirstBad != "" {
			total.FirstBad = n.Addr + ": " + s.FirstBad
		}
	}
	total.Seconds = time.Since(start).Seconds()
	return total, nil
}

// keyCount is the target's DBSIZE, summed over its nodes.
func keyCount(ctx context.Context, tgt target.Server) (int64, error) {
	var sum int64
	for _, n := range tgt.Nodes {
		k, err := rig.ProbeDBSize(ctx, n.Probe)
		if err != nil {
			return 0, err
		}
		sum += k
	}
	return sum, nil
}

// nodeReading is one node's counters at one moment, read where it runs.
type nodeReading struct {
	readBytes int64 // -1: its pid is unknown
	pl        results.Placement
	ticks     rig.ProcTicks
	ticksErr  error
	// deviceReads is INFO store's Device.CompletedReads, for the
	// scenarios that count them.
	deviceReads int64
}

// readNodes reads every node's counters, in the target's order.
func readNodes(ctx context.Context, row results.Row, tgt target.Server) ([]nodeReading, error) {
	out := make([]nodeReading, len(tgt.Nodes))
	for i, n := range tgt.Nodes {
		rd := &out[i]
		rd.readBytes, rd.ticksErr = -1, rig.ErrPIDUnknown
		if n.Probe.Counts() {
			var err error
			if rd.readBytes, rd.pl, err = n.Probe.Evidence(ctx); err != nil {
				return nil, err
			}
			rd.ticks, rd.ticksErr = n.Probe.CPUTicks(ctx)
		}
		if plan.RowSpec(row).DeviceReads {
			var err error
			if rd.deviceReads, err = deviceReads(ctx, n); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// recordNodes puts the change of every node's counters between before and
// after into rec: device bytes, server CPU, device reads and placement,
// the totals over the nodes and, for a cluster, each node's own figures
// (ops from the client's per-node breakdown); each node's placement is
// checked against what it was given.
func recordNodes(rec *results.PassRecord, row results.Row, tgt target.Server, before, after []nodeReading, cell rig.BenchCell) error {
	ops := map[string]int64{}
	if cell.Cluster != nil {
		for _, n := range cell.Cluster.Nodes {
			ops[n.Addr] = n.Ops
		}
	}
	hz, note := rig.ClockTicks()
	rec.ReadBytes, rec.ServerCPUSeconds, rec.ServerSystemCPUSeconds, rec.CPUNote = 0, 0, 0, note
	if tgt.Cluster {
		rec.ClockTicks = hz
	}
	counting := plan.RowSpec(row).DeviceReads
	if counting {
		rec.DeviceReads = 0
	}
	var cpus []int
	for i, n := range tgt.Nodes {
		b, a := before[i], after[i]
		np := results.NodePass{ID: n.ID, Addr: n.Addr, Ops: ops[n.Addr], Keys: n.Keys, ReadBytes: -1}
		np.OpsPerSec = float64(np.Ops) / max(rec.Seconds, 1e-9)
		if b.readBytes < 0 || a.readBytes < 0 {
			rec.ReadBytes = -1
		} else {
			np.ReadBytes = a.readBytes - b.readBytes
			if rec.ReadBytes >= 0 {
				rec.ReadBytes += np.ReadBytes
			}
			np.Server = a.pl
			if n.Handle != nil {
				want := n.Handle.Placement()
				np.Server.WantCPUs, np.Server.WantMems = want.WantCPUs, want.WantMems
				if np.Server.Policy == "default" {
					np.Server.Policy = want.Policy
				}
			}
			role := "server"
			if tgt.Cluster {
				role = "shard " + n.Addr
			}
			if err := rig.CheckPlacement(role, np.Server); err != nil {
				return err
			}
			if set, err := rig.ParseCPUList(np.Server.CPUs); err == nil {
				cpus = append(cpus, set...)
			}
		}
		switch err := cmpErr(b.ticksErr, a.ticksErr); {
		case err != nil && tgt.Cluster:
			rec.CPUNote = "the pid of cluster node " + n.Addr + " is unknown"
		case err != nil:
			rec.CPUNote = err.Error()
		default:
			rec.ClockTicks = hz
			np.ServerCPUSeconds = float64(a.ticks.Total()-b.ticks.Total()) / float64(hz)
			rec.ServerCPUSeconds += np.ServerCPUSeconds
			rec.ServerSystemCPUSeconds += float64(a.ticks.System-b.ticks.System) / float64(hz)
		}
		if counting {
			np.DeviceReads = a.deviceReads - b.deviceReads
			rec.DeviceReads += np.DeviceReads
		}
		if np.Ops > 0 && np.ReadBytes >= 0 {
			np.ReadBytesPerGet = float64(np.ReadBytes) / float64(np.Ops)
		}
		if tgt.Cluster {
			rec.Nodes = append(rec.Nodes, np)
		} else {
			rec.Server = np.Server
		}
	}
	if tgt.Cluster {
		slices.Sort(cpus)
		rec.Server.CPUs = rig.FormatCPUList(slices.Compact(cpus))
	}
	if rec.Ops > 0 && rec.CPUNote == "" {
		rec.CPUMicrosPerOp = 1e6 * (rec.ServerCPUSeconds + rec.ClientCPUSeconds) / float64(rec.Ops)
	}
	return nil
}

// cmpErr is the first non-nil of its errors.
func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// deviceReads reads Device.CompletedReads from INFO store of one node,
// through its probe (where it runs).
func deviceReads(ctx context.Context, n *target.Node) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := rig.ProbeInfo(ctx, n.Probe, "store")
	if err != nil {
		return 0, fmt.Errorf("pass: INFO store of %s: %w", n.Addr, err)
	}
	v, err := parseDeviceReads(info)
	if err != nil {
		return 0, fmt.Errorf("%w (%s)", err, n.Addr)
	}
	return v, nil
}

// parseDeviceReads takes Device.CompletedReads from INFO store's fields.
func parseDeviceReads(info map[string]string) (int64, error) {
	v, ok := info["Device.CompletedReads"]
	if !ok {
		return -1, fmt.Errorf("pass: INFO store has no Device.CompletedReads: the server is not tiered")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1, fmt.Errorf("pass: INFO store Device.CompletedReads %q is not a count", v)
	}
	return n, nil
}
