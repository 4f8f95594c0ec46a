// Package bench is the RESP load generator: offline pipelined throughput and
// online per-op latency against any RESP server.
package bench
