package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
)

// ErrTampered is wrapped by the error of a bundle whose files or medians
// are not the ones its results.json recorded.
var ErrTampered = errors.New("results: bundle does not match its results.json")

// ErrNoChecksums is wrapped by Verify's error for a bundle whose
// results.json records no checksums: one written before tierbench
// recorded them, which nothing can vouch for.
var ErrNoChecksums = errors.New("results: bundle records no checksums")

// FileSum is one file of a bundle and its content's sha256.
type FileSum struct {
	Path   string `json:"path"` // relative to the bundle, with forward slashes
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// ChecksumFiles hashes every regular file under dir except results.json
// (which holds the sums), sorted by path.
func ChecksumFiles(dir string) ([]FileSum, error) {
	var sums []FileSum
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == FileResults {
			return nil
		}
		sum, n, err := hashFile(path)
		if err != nil {
			return err
		}
		sums = append(sums, FileSum{Path: rel, Bytes: n, SHA256: sum})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("results: checksum bundle %s: %w", dir, err)
	}
	slices.SortFunc(sums, func(a, b FileSum) int { return strings.Compare(a.Path, b.Path) })
	return sums, nil
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

// Verify checks a bundle against its results.json: every file it
// lists is present with the recorded sha256, no file was added, and the
// medians, loads and ceiling it states are what plan.json, cells.jsonl
// and preflight.json give (results.json cannot hold its own checksum, so
// its numbers are checked by deriving them again). It prints one line per
// finding and returns an error wrapping ErrTampered that names them.
func Verify(dir string, w io.Writer) error {
	var rec Results
	if err := ReadJSON(dir, FileResults, &rec); err != nil {
		return err
	}
	if len(rec.Files) == 0 {
		return fmt.Errorf("%w: %s (its %s was written by a tierbench before they were recorded; `tierbench report %s` records them, but cannot vouch for what happened before)",
			ErrNoChecksums, dir, FileResults, dir)
	}
	now, err := ChecksumFiles(dir)
	if err != nil {
		return err
	}
	found := diffSums(rec.Files, now)
	derived, err := Derive(dir, nil)
	if err != nil {
		found = append(found, fmt.Sprintf("cannot derive the results again from the bundle's records: %v", err))
	} else {
		found = append(found, diffDerived(rec, derived)...)
	}
	for _, f := range found {
		fmt.Fprintf(w, "FAIL %s\n", f)
	}
	if len(found) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrTampered, dir, strings.Join(found, "; "))
	}
	fmt.Fprintf(w, "ok %s: %d files match the sha256 sums in %s, and its medians are what cells.jsonl gives\n", dir, len(now), FileResults)
	return nil
}

// diffSums names each file edited, missing or added since the sums
// were recorded.
func diffSums(recorded, now []FileSum) []string {
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
		case n.SHA256 != r.SHA256:
			found = append(found, fmt.Sprintf("%s was edited: sha256 %s (%d B), recorded %s (%d B)", r.Path, n.SHA256, n.Bytes, r.SHA256, r.Bytes))
		}
		delete(byPath, r.Path)
	}
	var added []string
	for p := range byPath {
		added = append(added, p)
	}
	slices.Sort(added)
	for _, p := range added {
		found = append(found, fmt.Sprintf("%s was added after %s was written", p, FileResults))
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
