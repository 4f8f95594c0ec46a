// Package orchestrator runs the reproduction: it plans the backend × pin ×
// threads matrix, starts server and client (Docker containers or pinned
// processes), loads and verifies the dataset, proves reads hit the device,
// takes medians and writes the results bundle, table and report.
//
// It drives the parts below it only through the tierbench binary's command
// line and JSON — `tierbench preflight --json`, `tierbench server`,
// `tierbench bench --json` — exactly as it would drive Garnet or Redis, and
// it speaks RESP itself only for PING, DBSIZE and INFO.
//
// This package is the facade: Run, the row loop, resume, the exit
// statuses, and registry.go, the one list of what a run can measure and
// where it can run. Each concern below it is a package that imports
// nothing above it and reaches the run only through an Env interface of
// its own, which the facade's *_env.go files implement: plan (the
// configuration, resolved and checked), rig (the door to the hardware,
// and the runtimes under it), target (where a row's server answers),
// fleet (the clients), pass (a row's load, phases and evidence), ceiling
// and preflight (fio and the host checks), watch (progress, status.json,
// metrics), tlsrow, latency, ladder and sweep (dimensions and
// measurements), safe and fault. docs/architecture.md walks through a run
// and the packages; a new measurement, dimension or runtime is a package
// of its own and a line in registry.go.
//
// Invariants the facade keeps: nothing is created before the
// configuration is resolved and every registered part has said it
// supports it; every row's server is stopped and every data dir wiped
// (unless --keep-data) on success, error and signal; the bundle is
// sealed (SHA256SUMS) only after its last file is written.
package orchestrator
