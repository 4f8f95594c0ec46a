// Package report renders a results bundle for people: report.html (one
// self-contained page, HTMLPage), table.md (the
// reference's `| backend | NUMA | t=… |` layout, excluded cells marked and
// explained), report.md (the finding first: a host line, the table and
// its verdict, with one link to docs/methodology.md where the columns and
// marks are defined; then host, workload, the share of the fio ceiling,
// load, device-hit, disk and CPU evidence, latency, cluster nodes,
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
//     results.json's "finished" time), and SHA256SUMS comes last, since it
//     records the sha256 of every other file (results.Seal).
//   - Render (the run's) seals without checking old sums; Rerender (a
//     reader's `tierbench report`) renders only a bundle whose sums hold,
//     or one told why (--resign), recorded in signings.jsonl.
//   - Render writes only table.md, report.md, report.html, results.json,
//     signings.jsonl (when told), the charts and SHA256SUMS (plus the top
//     report.md, report.html and SHA256SUMS of an all bundle); Verify and
//     Export write nothing into the bundle.
//   - Host documents (fingerprint, preflight) are read as hostcheck's
//     JSON types; report never imports orchestrator.
package report
