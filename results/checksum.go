package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
)

// ErrTampered is wrapped by the error of a bundle whose files or medians
// are not the ones its sums recorded.
var ErrTampered = errors.New("results: bundle does not match its sums")

// ErrNoChecksums is wrapped by Verify's error for a bundle with no sums
// at all: no SHA256SUMS and no sums in results.json (one written before
// tierbench recorded them, or whose sums were deleted).
var ErrNoChecksums = errors.New("results: bundle records no checksums")

// FileSum is one file of a bundle and its content's sha256.
type FileSum struct {
	Path   string `json:"path"`   // relative to the bundle, with forward slashes
	Bytes  int64  `json:"bytes"`  // -1 when read from SHA256SUMS, which has no sizes
	SHA256 string `json:"sha256"` // lowercase hex
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Verify checks a bundle against its sums (Check) and prints one line
// per finding, or one ok line. Its error wraps ErrTampered when a file or
// median differs, ErrNoChecksums when the bundle has no sums at all, and
// ErrLegacySums when its sums hold but leave results.json uncovered.
func Verify(dir string, w io.Writer) error {
	in, err := Check(dir)
	if err != nil {
		return err
	}
	for _, f := range in.Findings {
		fmt.Fprintf(w, "FAIL %s\n", f)
	}
	switch {
	case len(in.Findings) > 0:
		return fmt.Errorf("%w: %s: %s", ErrTampered, dir, strings.Join(in.Findings, "; "))
	case in.Legacy:
		fmt.Fprintf(w, "UNCOVERED %s: %d files match the sums in %s, but %s\n", dir, in.Files, FileResults, in.Uncovered())
		return fmt.Errorf("%w: %s: %s; `tierbench report %s` seals it whole", ErrLegacySums, dir, in.Uncovered(), dir)
	case !in.Sealed:
		fmt.Fprintf(w, "UNCOVERED %s: %s\n", dir, in.Uncovered())
		return fmt.Errorf("%w: %s: %s; `tierbench report --resign WHY %s` seals it as it is, recording why", ErrNoChecksums, dir, in.Uncovered(), dir)
	}
	fmt.Fprintf(w, "ok %s: %d files match %s, %s included, and its medians are what cells.jsonl gives\n", dir, in.Files, FileSums, FileResults)
	return nil
}

// diffSums names each file edited, missing or added since the sums in
// the file named from were recorded.
func diffSums(recorded, now []FileSum, from string) []string {
	byPath := map[string]FileSum{}
	for _, s := range now {
		byPath[s.Path] = s
	}
	var found []string
	for _, r := range recorded {
		n, ok := byPath[r.Path]
		switch {
		case !ok:
			found = append(found, fmt.Sprintf("%s is missing (recorded with sha256 %s)", r.Path, r.SHA256))
		case n.SHA256 != r.SHA256 && r.Bytes >= 0:
			found = append(found, fmt.Sprintf("%s was edited: sha256 %s (%d B), recorded %s (%d B)", r.Path, n.SHA256, n.Bytes, r.SHA256, r.Bytes))
		case n.SHA256 != r.SHA256:
			found = append(found, fmt.Sprintf("%s was edited: sha256 %s (%d B), recorded %s", r.Path, n.SHA256, n.Bytes, r.SHA256))
		}
		delete(byPath, r.Path)
	}
	var added []string
	for p := range byPath {
		added = append(added, p)
	}
	slices.Sort(added)
	for _, p := range added {
		found = append(found, fmt.Sprintf("%s is not covered by %s: added after it was written", p, from))
	}
	return found
}

// diffDerived names each part of results.json that differs from the
// same part derived again from the bundle's raw records, and each cell.
func diffDerived(rec, derived Results) []string {
	const why = "from what plan.json, cells.jsonl and preflight.json give (edited, or rendered by another tierbench version)"
	var found []string
	for _, p := range []struct {
		name      string
		got, want any
	}{
		{"plan", rec.Plan, derived.Plan},
		{"loads", rec.Loads, derived.Loads},
		{"failures", rec.Failures, derived.Failures},
		{"fio_iops_512", rec.FioIOPS512, derived.FioIOPS512},
		{"ceilings", rec.Ceilings, derived.Ceilings},
		{"engine CPU", rec.FioCPU, derived.FioCPU},
		{"latency steps", rec.Latency, derived.Latency},
	} {
		if !sameJSON(p.got, p.want) {
			found = append(found, fmt.Sprintf("%s: its %s differs %s", FileResults, p.name, why))
		}
	}
	if len(rec.Cells) != len(derived.Cells) {
		return append(found, fmt.Sprintf("%s: its %d cells differ in number %s (%d)", FileResults, len(rec.Cells), why, len(derived.Cells)))
	}
	for i, c := range rec.Cells {
		d := derived.Cells[i]
		if !sameJSON(c, d) {
			found = append(found, fmt.Sprintf("%s: cell %s %s t=%d (median %s, min %s, max %s, excluded %q) differs %s: median %s, min %s, max %s, excluded %q",
				FileResults, human.Title(c.Row.Backend), c.Row.Label, c.Threads, human.Ops(c.Median), human.Ops(c.Min), human.Ops(c.Max), c.Excluded,
				why, human.Ops(d.Median), human.Ops(d.Min), human.Ops(d.Max), d.Excluded))
		}
	}
	return found
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
