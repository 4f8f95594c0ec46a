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
// Invariants: a bundle of a newer schema is refused (ErrNewerSchema);
// bundles whose records or key counts differ (--keylength, --valuelength,
// --dbsize) measure different things and are refused (ErrIncomparable)
// unless Options.Force, in which case the output says in bold what was
// forced. Compare never writes to a bundle. The Markdown and the JSON
// carry the same facts; the JSON is the Comparison type itself.
package compare
