// Package report renders a results bundle for people: table.md (the
// reference's `| backend | NUMA | t=… |` layout, excluded cells marked and
// explained), report.md (host, workload, the table, the share of the fio
// ceiling, load, device-hit, disk and CPU evidence, latency, cluster nodes,
// failures) and the SVG charts; and, at the top of a --scenario all
// bundle, a report.md that shows each scenario's table and links its
// report and ladder. `tierbench report` is Render and Verify; the run
// calls Render when it finishes.
//
// Invariants:
//
//   - Everything is rendered from the bundle's raw records through
//     results.Derive, never from what results.json says: Render of the
//     same bundle by the same tierbench writes the same bytes (but for
//     results.json's "finished" time), and results.json comes last, since
//     it records the sha256 of every other file.
//   - Render writes only table.md, report.md, results.json and the charts
//     (plus the top report.md of an all bundle); Verify writes nothing.
//   - Host documents (fingerprint, preflight) are read as hostcheck's
//     JSON types; report never imports orchestrator.
package report
