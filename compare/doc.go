// Package compare sets results bundles of `tierbench run` side by side:
// `tierbench compare A B [C …]`.
//
// Per scenario it lists every cell (row × thread count) with each
// bundle's median and its delta against the first bundle, decided from
// the passes behind the medians with benchstat's statistics
// (golang.org/x/perf/benchmath: Mann–Whitney U, α = 0.05). A delta the
// test cannot tell from noise is written "~", and the test's own notes —
// such as how many passes it would take to ever reach significance, which
// the quick profile's two passes never do — become footnotes. Beside the
// table it shows the host fingerprint fields and the workload flags that
// differ between the bundles, and nothing that agrees.
//
// It reads bundles through package results alone, never the run's
// package: a bundle of one scenario is one table, a --scenario all bundle
// one table per scenario, each headed by its scenario's name; a row is
// results.RowKey (backend, pin, -b, shards, hosts), so rows that differ by
// -b or shard count never collapse into one.
//
// Invariants: every bundle is checked against its sums before any of it
// is read, as `tierbench report --verify` checks it; one whose sums fail
// is refused (ErrTampered, naming what differs), one whose sums are
// missing or leave results.json uncovered too (ErrUnverified), unless
// Options.Unverified, which compares it under a bold line and marks every
// figure from it (†, Value.Unverified); one holding a link or a pipe is
// never read. Judge turns the comparison into a gate (Gate): the cells
// significantly slower than the first bundle's by more than a threshold,
// and how many cells no test could judge (too few passes, Value.MinP).
// Medians, exclusions and the
// test's passes all come from cells.jsonl (results.json's medians only
// for a lone results.json), so they always describe the same passes.
// A bundle of a newer schema is refused (ErrNewerSchema);
// bundles whose records or key counts differ (--keylength, --valuelength,
// --dbsize) measure different things and are refused (ErrIncomparable)
// unless Options.Force, in which case the output says in bold what was
// forced. Compare never writes to a bundle. The Markdown and the JSON
// carry the same facts; the JSON is the Comparison type itself.
package compare
