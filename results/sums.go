package results

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FileSums is the bundle's seal: the sha256 of every other file of the
// bundle, results.json included, one "HEX  PATH" line each as sha256sum
// writes them, so `sha256sum -c SHA256SUMS` checks a bundle without
// tierbench. It is written last.
const FileSums = "SHA256SUMS"

// FileSignings records every time a bundle was sealed over something its
// old sums did not vouch for (Signing, one JSON line each); the sums cover it.
const FileSignings = "signings.jsonl"

// ErrLegacySums is wrapped by Verify's error for a bundle sealed before
// results.json itself was covered: its other files match the sums in its
// results.json, but nothing vouches for results.json.
var ErrLegacySums = errors.New("results: bundle sealed before results.json was covered")

// Signing is one line of signings.jsonl: a seal put on a bundle whose
// old sums failed, were missing, or left results.json uncovered.
type Signing struct {
	// Kind is "resign" (report --resign: an explicit decision) or
	// "upgrade" (report over a bundle whose legacy sums held).
	Kind    string    `json:"kind"`
	Time    time.Time `json:"time"`
	By      string    `json:"by"`      // user@host that sealed it
	Version string    `json:"version"` // the tierbench that sealed it
	Why     string    `json:"why"`
	// Findings are what the check of the old sums found just before.
	Findings []string `json:"findings"`
}

// Integrity is what the check of a bundle against its sums found.
type Integrity struct {
	// Sealed: the bundle has SHA256SUMS. Legacy: it has none, but its
	// results.json records the sums of the other files.
	Sealed, Legacy bool
	// Findings are the files edited, missing, added or not regular, and
	// the parts of results.json that are not what the records give; empty
	// when the sums hold.
	Findings []string
	Files    int // files the sums cover and that matched
	// Irregular names the entries that are neither regular files nor
	// directories (also among Findings): nothing may read such a bundle,
	// since a link leads out of it and a pipe blocks its reader.
	Irregular []string
}

// Holds reports whether the bundle's sums exist and every file matches.
func (in Integrity) Holds() bool { return (in.Sealed || in.Legacy) && len(in.Findings) == 0 }

// Uncovered says what no sum vouches for in a bundle that is not sealed:
// "" for a sealed one.
func (in Integrity) Uncovered() string {
	switch {
	case in.Sealed:
		return ""
	case in.Legacy:
		return fmt.Sprintf("it was sealed before %s covered %s: its other files match the sums %s records, but nothing vouches for %s itself (its scenario, fio ceilings, hosts, rechecks and the sums themselves could be edited)",
			FileSums, FileResults, FileResults, FileResults)
	}
	return fmt.Sprintf("it has no %s and its %s records no sums (written before tierbench recorded them, or they were deleted): nothing vouches for any of its files", FileSums, FileResults)
}

// Check checks the bundle at dir against its sums without writing: with
// SHA256SUMS, every file listed must match, none may be added, and every
// entry must be a regular file or a directory; without, the legacy sums
// in results.json are checked. In both, results.json's medians must be
// what the raw records give. An error means the bundle cannot be read.
func Check(dir string) (Integrity, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // a link to a bundle is fine; links inside it are not
	}
	var in Integrity
	listed, err := readSums(dir)
	switch {
	case err == nil:
		if in, err = checkListed(dir, listed); err != nil {
			return in, err
		}
		if !slices.ContainsFunc(listed.sums, func(s FileSum) bool { return s.Path == FileResults }) {
			in.Findings = append(in.Findings, fmt.Sprintf("%s does not list %s", FileSums, FileResults))
		}
	case errors.Is(err, fs.ErrNotExist):
		var rec Results
		if err := ReadJSON(dir, FileResults, &rec); err != nil {
			if st, serr := os.Stat(dir); serr == nil && st.IsDir() && errors.Is(err, fs.ErrNotExist) {
				return in, nil // a run that stopped before its render: nothing sealed it
			}
			return in, err
		}
		if len(rec.Files) == 0 {
			return in, nil
		}
		in.Legacy = true
		now, odd, err := walkBundle(dir, FileResults)
		if err != nil {
			return in, err
		}
		in.Findings = append(in.Findings, odd...)
		in.Irregular = odd
		diff := diffSums(rec.Files, now, FileResults)
		in.Findings = append(in.Findings, diff...)
		in.Files = len(rec.Files) - len(diff)
	default:
		return in, err
	}
	if len(in.Irregular) > 0 {
		return in, nil // deriving would read through them
	}
	var rec Results
	if err := ReadJSON(dir, FileResults, &rec); err != nil {
		in.Findings = append(in.Findings, fmt.Sprintf("cannot read %s: %v", FileResults, err))
		return in, nil
	}
	derived, err := Derive(dir, nil)
	if errors.Is(err, ErrNewerSchema) {
		return in, err // not this tierbench's to judge
	} else if err != nil {
		in.Findings = append(in.Findings, fmt.Sprintf("cannot derive the results again from the bundle's records: %v", err))
	} else {
		in.Findings = append(in.Findings, diffDerived(rec, derived)...)
	}
	return in, nil
}

// CheckFiles checks only the files of the tree at dir against its
// SHA256SUMS, deriving nothing: the top of a --scenario all bundle, whose
// scenarios.json and index hold no measurement of their own. Sealed is
// false when it has no SHA256SUMS.
func CheckFiles(dir string) (Integrity, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	listed, err := readSums(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Integrity{}, nil
	} else if err != nil {
		return Integrity{}, err
	}
	return checkListed(dir, listed)
}

// checkListed checks the files under dir against the sums SHA256SUMS
// listed: its bad lines, entries not regular, files edited, missing or
// added.
func checkListed(dir string, listed sumsFile) (Integrity, error) {
	in := Integrity{Sealed: true}
	in.Findings = append(in.Findings, listed.problems...)
	now, odd, err := walkBundle(dir, FileSums)
	if err != nil {
		return in, err
	}
	in.Findings = append(in.Findings, odd...)
	in.Irregular = odd
	diff := diffSums(listed.sums, now, FileSums)
	in.Findings = append(in.Findings, diff...)
	in.Files = len(listed.sums) - len(diff)
	return in, nil
}

// Seal writes SHA256SUMS over every file of the bundle, appending
// signing to signings.jsonl first when it is not nil (so the sums cover
// it). It refuses a bundle holding anything but regular files and
// directories, which no sum could vouch for.
func Seal(dir string, signing *Signing) error {
	if signing != nil {
		if err := AppendSigning(dir, *signing); err != nil {
			return err
		}
	}
	sums, odd, err := walkBundle(dir, FileSums)
	if err != nil {
		return err
	}
	if len(odd) > 0 {
		return fmt.Errorf("results: seal %s: %s", dir, strings.Join(odd, "; "))
	}
	var b bytes.Buffer
	for _, s := range sums {
		fmt.Fprintf(&b, "%s  %s\n", s.SHA256, s.Path)
	}
	return WriteFile(dir, FileSums, b.Bytes())
}

// ReadSignings reads signings.jsonl; none when the bundle has none.
func ReadSignings(dir string) ([]Signing, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileSignings))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("results: read %s: %w", FileSignings, err)
	}
	var out []Signing
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var s Signing
		if err := json.Unmarshal(line, &s); err != nil {
			return nil, fmt.Errorf("results: %s line %d: %w", filepath.Join(dir, FileSignings), i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// AppendSigning adds s to signings.jsonl; Seal must follow.
func AppendSigning(dir string, s Signing) error {
	line, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("results: encode signing: %w", err)
	}
	old, err := os.ReadFile(filepath.Join(dir, FileSignings))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("results: read %s: %w", FileSignings, err)
	}
	return WriteFile(dir, FileSignings, append(append(old, line...), '\n'))
}

// sumsFile is SHA256SUMS as read: its sums and what is wrong with its lines.
type sumsFile struct {
	sums     []FileSum
	problems []string
}

// readSums parses SHA256SUMS. A malformed line (a truncated file ends in
// one) is a problem, not an error: the files it would have listed then
// show as added.
func readSums(dir string) (sumsFile, error) {
	var out sumsFile
	f, err := os.Lstat(filepath.Join(dir, FileSums))
	if err != nil {
		return out, err
	}
	if !f.Mode().IsRegular() {
		return out, fmt.Errorf("results: %s in %s is not a regular file (%s): refusing to read sums through it", FileSums, dir, f.Mode().Type())
	}
	b, err := os.ReadFile(filepath.Join(dir, FileSums))
	if err != nil {
		return out, fmt.Errorf("results: read %s: %w", FileSums, err)
	}
	out.sums, out.problems = ParseSums(b)
	return out, nil
}

// ParseSums parses the lines of a SHA256SUMS file: "HEX  PATH", one file
// each, PATH relative and inside the bundle. It returns the good lines'
// sums and one problem per bad line; bytes that are no sums file give
// problems, never a panic.
func ParseSums(b []byte) ([]FileSum, []string) {
	var sums []FileSum
	var problems []string
	if len(b) == 0 {
		return nil, []string{FileSums + " is empty"}
	}
	if b[len(b)-1] != '\n' {
		problems = append(problems, fmt.Sprintf("%s does not end with a newline: truncated?", FileSums))
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		hexSum, path, ok := strings.Cut(line, "  ")
		raw, err := hex.DecodeString(hexSum)
		switch {
		case !ok || err != nil || len(raw) != 32 || strings.ToLower(hexSum) != hexSum:
			problems = append(problems, fmt.Sprintf("%s line %d is not \"SHA256  PATH\": %q", FileSums, n, clipLine(line)))
			continue
		case !filepath.IsLocal(path) || strings.ContainsAny(path, "\\\r") || filepath.ToSlash(filepath.Clean(path)) != path:
			problems = append(problems, fmt.Sprintf("%s line %d names %q, not a plain path inside the bundle", FileSums, n, clipLine(path)))
			continue
		case seen[path]:
			problems = append(problems, fmt.Sprintf("%s lists %s twice", FileSums, path))
			continue
		}
		seen[path] = true
		sums = append(sums, FileSum{Path: path, SHA256: hexSum, Bytes: -1})
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("%s cannot be read line by line: %v", FileSums, err))
	}
	return sums, problems
}

func clipLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// walkBundle hashes every regular file under dir but skip (the file that
// holds the sums), sorted by path, and names every entry that is neither
// a regular file nor a directory: a symlink could make a reader read a
// file no sum covers.
func walkBundle(dir, skip string) ([]FileSum, []string, error) {
	var sums []FileSum
	var odd []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(path)
			odd = append(odd, fmt.Sprintf("%s is a symlink (to %s): a bundle holds regular files only, and no sum vouches for what a link points at", rel, to))
			return nil
		case !d.Type().IsRegular():
			odd = append(odd, fmt.Sprintf("%s is not a regular file (%s)", rel, d.Type()))
			return nil
		case rel == skip:
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
		return nil, nil, fmt.Errorf("results: checksum bundle %s: %w", dir, err)
	}
	slices.SortFunc(sums, func(a, b FileSum) int { return strings.Compare(a.Path, b.Path) })
	return sums, odd, nil
}

// Edited lists the files SHA256SUMS vouches for that no longer match it
// (edited or gone), except those named in live: files the run itself
// rewrites after sealing (its status). Files added since the seal are
// not edits: a run resumed after its first seal adds its ladder's.
// A bundle without SHA256SUMS has nothing to list.
func Edited(dir string, live ...string) ([]string, error) {
	listed, err := readSums(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	now, _, err := walkBundle(dir, FileSums)
	if err != nil {
		return nil, err
	}
	var kept []FileSum
	for _, s := range listed.sums {
		if !slices.Contains(live, s.Path) {
			kept = append(kept, s)
		}
	}
	// Only the listed files' present state: an added file is no edit.
	now = slices.DeleteFunc(now, func(n FileSum) bool {
		return !slices.ContainsFunc(kept, func(k FileSum) bool { return k.Path == n.Path })
	})
	return diffSums(kept, now, FileSums), nil
}
