// Package results is the results bundle's format: what `tierbench run`
// writes, and what `tierbench report`, `tierbench compare` and any other
// reader read back. It holds the records, their writers and readers, and
// the verdicts that turn raw records into the table's cells — nothing
// that runs a server, a client or a tool.
//
// # The bundle
//
//   - plan.json (Plan): what the run set out to do; Plan.Workload is the
//     run's configuration under JSON names fixed in Workload, not a Go
//     type of the run. --resume reads it back.
//   - fingerprint.json, preflight.json: hostcheck's documents, read here
//     only through Preflight (checks, fingerprint bytes, fio baseline).
//   - cells.jsonl: one line per load (LoadRecord), per measured pass
//     (PassRecord) and per failed or refused row (FailRecord), appended
//     and fsynced one by one (CellsLog), so a crash loses no finished cell.
//   - ceilings.jsonl (CeilingRecord), fio-cpu.jsonl (FioCPURecord),
//     latency.jsonl (LatencyRecord) and
//     hosts/ (HostsPlan, NetworkCheck, HostsLatencyRecord): appended alike.
//   - ladder.json (Ladder), scenarios.json (ScenarioIndex, the top of a
//     --scenario all bundle, whose scenarios are bundles below it).
//   - results.json (Results): derived, never measured — the plan, the
//     loads, each cell's median with min and max and why it is kept out.
//     Bundles sealed before SHA256SUMS hold the sha256 of every other file
//     here (Files), and nothing covers results.json itself.
//   - signings.jsonl (Signing): each seal put over what the old sums did
//     not vouch for (report --resign, or an upgrade), who, when and why.
//   - SHA256SUMS (FileSums): the seal, written last, the sha256 of every
//     other file, results.json included, as sha256sum writes them.
//
// # Invariants
//
//   - Derive computes results.json from the raw records alone and judges
//     every pass again by this tierbench's thresholds (JudgePass,
//     Aggregate); a bundle can always be rendered again, and Check and
//     Verify check a bundle's files against its sums (every entry a regular
//     file, none added) and its medians against its passes.
//   - Every reader refuses a record of a newer SchemaVersion
//     (ErrNewerSchema); bundles of schema 1 and 2 read unchanged. A torn
//     last line of a .jsonl file (the run died writing it) is dropped; a
//     bad line elsewhere is an error naming the file and line.
//   - Row.ID tells the rows of one plan apart; Plan.RowKey tells rows apart
//     across bundles (scenario, backend, pin, -b, shards, hosts): rows with
//     different keys never collapse into one.
//   - Nothing here writes to a bundle except the writers named Write… and
//     Append…, which the run alone calls.
//
// It imports only the standard library and small leaf packages
// (internal/...), so every reader can depend on it.
package results
