package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/results"
)

// benchCluster is the per-node breakdown bench prints with --cluster-bench.
type benchCluster struct {
	Nodes []struct {
		ID   string `json:"id"`
		Addr string `json:"addr"`
		Ops  int64  `json:"ops"`
		Hits int64  `json:"hits"`
	} `json:"nodes"`
	Moved int64 `json:"moved"`
	Ask   int64 `json:"ask"`
}

// slotOwners maps every slot to the index of the node serving it, -1 for
// none.
func slotOwners(nodes []*clusterNode) *[slots.Count]int {
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
func expectedKeys(nodes []*clusterNode, dbsize int64, keyLength int) []int64 {
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

// loadAndVerifyCluster is loadAndVerify for a row whose target is a
// cluster: every node's DBSIZE must be exactly the number of keys its
// slots hold and the loader's acknowledgements there must match, the
// totals must equal dbsize, every tiered node's log must be on the
// device, and a sample of keys, each read from its own node, must hit.
func (r *runner) loadAndVerifyCluster(ctx context.Context, row results.Row, tgt rowTarget) error {
	rec := results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: row, DBSize: r.cfg.DBSize, Acknowledged: -1, Time: time.Now().UTC(), Owner: tgt.nodes[0].proof}
	if tgt.srv != nil {
		rec.Server = tgt.srv.placement()
		rec.ServerMode = tgt.srv.mode()
		rec.UringProbe = tgt.uringProbe
	}
	if !r.cfg.SkipLoad {
		if err := r.load(ctx, row, tgt, &rec); err != nil {
			return err
		}
	}
	want := expectedKeys(tgt.nodes, r.cfg.DBSize, r.cfg.KeyLength)
	var verdicts []error
	rec.Tiered = true
	for i, n := range tgt.nodes {
		nl := results.NodeLoad{ID: n.ID, Addr: n.Addr, Slots: n.Slots, Acknowledged: -1, DataDir: n.dir, Owner: n.proof}
		if i < len(rec.Nodes) {
			nl.Acknowledged = rec.Nodes[i].Acknowledged
		}
		if n.srv != nil {
			nl.Server = n.srv.placement()
		}
		c, err := dialRESP(ctx, n.Addr)
		if err != nil {
			return err
		}
		nl.ServerKeys, err = c.dbsize()
		var info map[string]string
		if err == nil {
			info, err = c.info("store")
			if isRESPError(err) {
				err = nil
			}
		}
		if err == nil && i == 0 {
			var si results.ServerInfo
			if si, err = c.serverInfo(); err == nil {
				rec.ServerInfo = &si
			}
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("orchestrator: cluster node %s: %w", n.Addr, err)
		}
		one := results.LoadRecord{DBSize: want[i], Acknowledged: nl.Acknowledged, ServerKeys: nl.ServerKeys}
		if a, aerr := parseLogAddresses(info); aerr == nil {
			nl.Tiered, nl.HeadAddress, nl.TailAddress, nl.DeviceShare = true, a.Head, a.Tail, a.deviceShare()
			one.Tiered, one.BeginAddress, one.HeadAddress, one.TailAddress, one.DeviceShare = true, a.Begin, a.Head, a.Tail, nl.DeviceShare
		} else if !errors.Is(aerr, errNotTiered) {
			return aerr
		}
		rec.Tiered = rec.Tiered && nl.Tiered
		if i == 0 || nl.DeviceShare < rec.DeviceShare {
			rec.DeviceShare = nl.DeviceShare
		}
		rec.HeadAddress += nl.HeadAddress
		rec.TailAddress += nl.TailAddress
		rec.ServerKeys += nl.ServerKeys
		if v := verifyLoad(one, r.cfg); v != nil {
			verdicts = append(verdicts, fmt.Errorf("cluster node %s (%d slots, %d of the keys): %w", n.Addr, n.Slots, want[i], v))
		}
		n.Keys = nl.ServerKeys
		if i < len(rec.Nodes) {
			rec.Nodes[i] = nl
		} else {
			rec.Nodes = append(rec.Nodes, nl)
		}
	}
	// The totals, as one server's: the sum of DBSIZE must be dbsize.
	total := rec
	total.Tiered = false
	if v := verifyLoad(total, r.cfg); v != nil {
		verdicts = append([]error{v}, verdicts...)
	}
	verdict := errors.Join(verdicts...)
	if verdict != nil && r.cfg.Force && errors.Is(verdict, ErrNotOnDevice) && !errors.Is(verdict, ErrPartialLoad) {
		r.printf("%v; measuring anyway (--force): the device-hit check judges each cell\n", verdict)
		verdict = nil
	}
	if verdict == nil {
		r.printf("%s %s: sampled GET check of %d keys across %d nodes\n", titleCase(row.Backend), row.Label, min(r.cfg.DBSize, minSampleKeys), len(tgt.nodes))
		sample, err := r.sampleCluster(ctx, tgt.nodes, &rec, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x636c7573746572)))
		if err != nil {
			return errors.Join(err, r.cells.Append(rec))
		}
		rec.Sample = &sample
		verdict = judgeSample(sample, rec.ServerKeys, r.cfg)
	}
	if err := r.cells.Append(rec); err != nil {
		return errors.Join(verdict, err)
	}
	for i, nl := range rec.Nodes {
		r.printf("  node %s: %d slots, %d keys (want %d), log on device %.2f %%\n", nl.Addr, nl.Slots, nl.ServerKeys, want[i], 100*nl.DeviceShare)
	}
	if verdict != nil {
		return fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, verdict)
	}
	return nil
}

// sampleCluster draws the sampled GET check's keys over the whole key
// space and reads each from the node serving its slot.
func (r *runner) sampleCluster(ctx context.Context, nodes []*clusterNode, rec *results.LoadRecord, rnd *rand.Rand) (results.SampleCheck, error) {
	owner := slotOwners(nodes)
	keys := sampleKeys(r.cfg.DBSize, minSampleKeys, rnd)
	per := make([][]uint64, len(nodes))
	key := make([]byte, r.cfg.KeyLength)
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
	for i, n := range nodes {
		c, err := dialRESP(ctx, n.Addr)
		if err != nil {
			return total, err
		}
		s, err := sampleGets(ctx, c, r.cfg, per[i])
		c.Close()
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

// nodeCounters are a cluster pass's per-node /proc readings before the
// GETs.
type nodeCounters struct {
	readBytes []int64
	cpuTicks  []uint64
}

// countersBefore reads device bytes and CPU ticks of every node of a
// cluster target before a pass (a single server's are results.PassEvidence's).
func (r *runner) countersBefore(tgt rowTarget) (nodeCounters, error) {
	var c nodeCounters
	for _, n := range tgt.nodes {
		var rb int64
		var ticks uint64
		if n.PID > 0 {
			var err error
			if rb, err = r.proc.readBytes(n.PID); err != nil {
				return c, err
			}
			if ticks, err = r.proc.cpuTicks(n.PID); err != nil {
				return c, err
			}
		}
		c.readBytes, c.cpuTicks = append(c.readBytes, rb), append(c.cpuTicks, ticks)
	}
	return c, nil
}

// countersAfter fills CPU per op and, for a cluster, its device bytes,
// server CPU and CPU set (each the union over nodes) and per-node shares;
// then the evidence is judged again with the cluster's figures.
func (r *runner) countersAfter(rec *results.PassRecord, tgt rowTarget, before nodeCounters, cell benchCell) error {
	defer func() {
		if rec.Ops > 0 && rec.CPUNote == "" {
			rec.CPUMicrosPerOp = 1e6 * (rec.ServerCPUSeconds + rec.ClientCPUSeconds) / float64(rec.Ops)
		}
	}()
	if len(tgt.nodes) == 0 {
		return nil
	}
	ops := map[string]int64{}
	if cell.Cluster != nil {
		for _, n := range cell.Cluster.Nodes {
			ops[n.Addr] = n.Ops
		}
	}
	hz, note := clockTicks()
	rec.ReadBytes, rec.ServerCPUSeconds, rec.ClockTicks, rec.CPUNote = 0, 0, hz, note
	var cpus []int
	for i, n := range tgt.nodes {
		np := results.NodePass{ID: n.ID, Addr: n.Addr, Ops: ops[n.Addr], Keys: n.Keys, ReadBytes: -1}
		np.OpsPerSec = float64(np.Ops) / max(rec.Seconds, 1e-9)
		if n.PID <= 0 {
			rec.ReadBytes = -1
			rec.CPUNote = "the pid of cluster node " + n.Addr + " is unknown"
		} else {
			rb, err := r.proc.readBytes(n.PID)
			if err != nil {
				return err
			}
			ticks, err := r.proc.cpuTicks(n.PID)
			if err != nil {
				return err
			}
			np.ReadBytes = rb - before.readBytes[i]
			np.ServerCPUSeconds = float64(ticks-before.cpuTicks[i]) / float64(hz)
			if np.Server, err = r.proc.placement(n.PID); err != nil {
				return err
			}
			if n.srv != nil {
				want := n.srv.placement()
				np.Server.WantCPUs, np.Server.WantMems = want.WantCPUs, want.WantMems
			}
			if err := checkPlacement("shard "+n.Addr, np.Server); err != nil {
				return err
			}
			if rec.ReadBytes >= 0 {
				rec.ReadBytes += np.ReadBytes
			}
			rec.ServerCPUSeconds += np.ServerCPUSeconds
			if set, err := parseCPUList(np.Server.CPUs); err == nil {
				cpus = append(cpus, set...)
			}
		}
		if np.Ops > 0 && np.ReadBytes >= 0 {
			np.ReadBytesPerGet = float64(np.ReadBytes) / float64(np.Ops)
		}
		rec.Nodes = append(rec.Nodes, np)
	}
	slices.Sort(cpus)
	rec.Server.CPUs = formatCPUList(slices.Compact(cpus))
	results.JudgeEvidence(rec)
	return nil
}

// keyCount is the target's DBSIZE, summed over a cluster's nodes.
func keyCount(ctx context.Context, tgt rowTarget) (int64, error) {
	addrs := []string{tgt.addr}
	if len(tgt.nodes) > 0 {
		addrs = addrs[:0]
		for _, n := range tgt.nodes {
			addrs = append(addrs, n.Addr)
		}
	}
	var sum int64
	for _, a := range addrs {
		c, err := dialRESP(ctx, a)
		if err != nil {
			return 0, err
		}
		n, err := c.dbsize()
		c.Close()
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}
