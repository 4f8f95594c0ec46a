package ladder

import (
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// The estimate counts the ladder as Run runs it, backend by backend:
//
//   - on a native backend, the Device rung's shape sweep (deviceShapes:
//     up to three shapes) over a file as large as the dataset, laid out
//     by its first run and read by every Device and fio run after it;
//   - Rounds rounds of the Device rung, the fio rung (where a ceiling is
//     measured) and the KV rung, whose every round loads the dataset into
//     its own store, waits on a disk for the reads to come back to fio's
//     ceiling, and reads at up to two thread counts (kvThreads);
//   - with --latency, fio beside each fixed-rate step of the backend's
//     rows, over a file of its own laid out first, and again under a
//     spinning load where the step left the host less idle (loadToHold);
//   - for the LocalMemory scenario, the top: two servers loaded with the
//     dataset, warmed up, then their passes alternated.
//
// Counts that depend on what the run measures (the shapes that turn out
// distinct, the steps worth holding) are counted at their most, so the
// estimate errs long.

// Assumed rates of the ladder's untimed work (docs/notes has the run
// they were read from): tierbench kv's in-process load writes through
// the store alone (no network, no RESP); the Device rung lays out its
// file with O_DIRECT writes many in flight, faster than fio's buffered
// layout (plan.AssumedWriteBytesPerSec); a disk settles after a
// dataset's worth of writes before its reads reach the ceiling again.
const (
	assumedKVLoadKeysPerSec       = 900_000
	assumedDeviceWriteBytesPerSec = 600 << 20
	assumedSettleSeconds          = 20
	// startSeconds is a child process's start and exit around its timed
	// run: tierbench device or kv, or fio.
	startSeconds = 1
)

// fileBytesOf is the size of the files the Device rung and fio beside
// the latency steps read: the dataset's records, at least 64 MiB.
func fileBytesOf(c plan.Config) int64 {
	return max(c.DBSize*int64(results.RecordBytes(c.KeyLength, c.ValueLength)), 64<<20)
}

// Work is the ladder's work after the matrix, for the run's estimate:
// count is its timed runs over rows (each a cell long), seconds their
// mean with what runs untimed around them (files laid out, the KV
// rungs' loads, the disk settling, the top's loads and warm-ups) spread
// over them; latencySteps is the fixed-rate latency steps of each row
// (0 without --latency). None without --ladder.
func Work(c plan.Config, rows []results.Row, ownServers bool, latencySteps int) (count int, seconds float64, upTo bool) {
	if !c.Ladder {
		return 0, 0, false
	}
	cell := float64(max(c.CellSeconds, 1))
	var untimed float64
	for _, backend := range Backends(c, ownServers) {
		if !ownServers {
			break // RESP and the preflight's fio: nothing below RESP runs
		}
		w := backendWork(c, rows, backend, latencySteps)
		count += w.runs
		untimed += w.untimedSeconds
		upTo = upTo || w.upTo
	}
	if count == 0 {
		return 0, 0, false
	}
	return count, cell + startSeconds + untimed/float64(count), upTo
}

// ladderWork is one backend's ladder: runs timed a cell each, and the
// seconds of untimed work around them.
type ladderWork struct {
	runs           int
	untimedSeconds float64
	upTo           bool
}

// backendWork is backend's ladder under c, as Run would run it.
func backendWork(c plan.Config, rows []results.Row, backend string, latencySteps int) ladderWork {
	var w ladderWork
	native := backend != results.ScenarioLocalMemory
	fileBytes := float64(fileBytesOf(c))
	fio := native && !c.Spec().InRAM && plan.FioPlanned(c)
	if native {
		w.runs += 3 // deviceShapes, at their most
		w.untimedSeconds += fileBytes / assumedDeviceWriteBytesPerSec
		w.upTo = true
	}
	perRound := 1 + 2 // the Device rung and the KV rung's thread counts, at their most
	if fio {
		perRound++
	}
	w.runs += Rounds * perRound
	kvLoad := float64(c.DBSize) / assumedKVLoadKeysPerSec
	if native {
		kvLoad += assumedSettleSeconds
	}
	w.untimedSeconds += Rounds * kvLoad
	if latencySteps > 0 && native && !c.Spec().InRAM {
		steps := 0
		for _, row := range rows {
			if row.Backend == backend && row.Shards <= 1 && !row.Ladder {
				steps += latencySteps
			}
		}
		if steps > 0 && fio {
			w.runs += 2 * steps // alone, and again under load at the most
			w.untimedSeconds += fileBytes/plan.AssumedWriteBytesPerSec + assumedSettleSeconds
			w.upTo = true
		}
	}
	if c.Spec().LadderTop {
		passes := max(c.Passes, Rounds)
		w.runs += 2 * passes
		w.untimedSeconds += 2 * (float64(c.DBSize)/plan.AssumedLoadKeysPerSec + float64(c.WarmupSeconds))
	}
	return w
}
