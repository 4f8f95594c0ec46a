package rig

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// sampledHitCheck GETs a uniform random sample of the key space,
// pipelined, and counts misses (null bulk), values of the wrong length
// and error replies.
func sampledHitCheck(ctx context.Context, c *respConn, cfg plan.Config, rnd *rand.Rand) (results.SampleCheck, error) {
	return sampleGets(ctx, c, cfg, SampleKeys(cfg.DBSize, MinSampleKeys, rnd))
}

// sampleGets GETs keys on c, pipelined, and counts misses (null bulk),
// values of the wrong length and error replies.
func sampleGets(ctx context.Context, c *respConn, cfg plan.Config, keys []uint64) (results.SampleCheck, error) {
	start := time.Now()
	res := results.SampleCheck{Keys: int64(len(keys))}
	w := bufio.NewWriterSize(c.c, 64<<10)
	var req []byte
	key := make([]byte, 0, cfg.KeyLength)
	for lo := 0; lo < len(keys); lo += sampleBatch {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		batch := keys[lo:min(lo+sampleBatch, len(keys))]
		req = req[:0]
		for _, k := range batch {
			key = keyspace.AppendKey(key[:0], k, cfg.KeyLength)
			req = fmt.Appendf(req, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key)
		}
		c.c.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := w.Write(req); err != nil {
			return res, fmt.Errorf("orchestrator: sampled GET check on %s: send: %w", c.addr, err)
		}
		if err := w.Flush(); err != nil {
			return res, fmt.Errorf("orchestrator: sampled GET check on %s: send: %w", c.addr, err)
		}
		for _, k := range batch {
			v, err := ReadReply(c.r)
			bad := ""
			switch s, isString := v.(string); {
			case isRESPError(err):
				res.Errors++
				bad = "error reply: " + err.Error()
			case err != nil:
				return res, fmt.Errorf("orchestrator: sampled GET check on %s: %w", c.addr, err)
			case v == nil:
				res.Missed++
				bad = "null bulk: a miss"
			case !isString:
				res.Errors++
				bad = fmt.Sprintf("a %T reply", v)
			case len(s) != cfg.ValueLength:
				res.WrongLength++
				bad = fmt.Sprintf("a %d B value, want %d B", len(s), cfg.ValueLength)
			}
			if bad != "" && res.FirstBad == "" {
				res.FirstBad = fmt.Sprintf("key %s: %s", keyspace.AppendKey(nil, k, cfg.KeyLength), bad)
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// MinSampleKeys is the sampled hit check's size: a 0.1 % hole survives
// 20 000 uniform samples with probability 0.999^20000 ≈ 2·10⁻⁹.
const MinSampleKeys = 20_000

// sampleBatch is how many GETs of the sample are pipelined at once.
const sampleBatch = 512

// SampleKeys returns n distinct key indices drawn uniformly from
// [0, dbsize), or every index when dbsize ≤ n, in ascending order.
func SampleKeys(dbsize int64, n int, rnd *rand.Rand) []uint64 {
	if dbsize <= int64(n) {
		out := make([]uint64, dbsize)
		for i := range out {
			out[i] = uint64(i)
		}
		return out
	}
	// Floyd's algorithm: n draws, each distinct, uniform over subsets.
	seen := make(map[uint64]bool, n)
	out := make([]uint64, 0, n)
	for j := dbsize - int64(n); j < dbsize; j++ {
		k := uint64(rnd.Int64N(j + 1))
		if seen[k] {
			k = uint64(j)
		}
		seen[k] = true
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
