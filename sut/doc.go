// Package sut is the catalogue of the systems under test: the servers
// `tierbench run --server NAME` can start and measure (tierbench itself,
// Garnet, Redis, Valkey, KeyDB, Dragonfly) and the one a user describes
// with --server-cmd. The name is the benchmarking term for the thing
// measured, as opposed to the load generator that measures it; the
// package knows nothing of how a run measures, only how each server is
// started and what it can be asked.
//
// Each entry is data, a few lines: the programs that start it on a host
// (looked up on PATH, or the one --server-bin names) and the image and
// entrypoint that start it under Docker (--server-image), its flags for
// each scenario it can run written as a command template with {port},
// {bind}, {data}, {memory}, {page}, {segment}, {index} and {backend}
// (template.go, the same language --server-cmd takes), how it spells the
// device backends, the sentence that refuses a scenario it cannot run,
// and the INFO fields it gives as evidence beyond /proc. The run reads
// the entry; it has no branch of its own for any server.
//
// Garnet's flags are the reference's own (Resp.benchmark's README, the
// seed of this project), flag for flag: a golden test holds them against
// the seed's command lines.
package sut
