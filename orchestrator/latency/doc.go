// Package latency measures what a row's throughput cells cannot: the
// fixed-rate steps after its passes (--latency: a PING floor, then
// 10–90 % of the best cell's median, each step's histogram kept as an
// HdrHistogram log) and the capacity search (--slo: the highest rate
// whose percentile meets the bound, at most SLOMaxProbes probes).
//
// It runs through an Env the facade hands it for one row and imports
// nothing of the facade; what latency.jsonl holds already is never
// measured again (--resume).
package latency
