package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// IsAll reports whether dir is the top of a --scenario all bundle: it
// holds scenarios.json and each scenario's bundle below it.
func IsAll(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, results.FileScenarios))
	return err == nil
}

// renderAll renders every scenario bundle of a --scenario all bundle and
// the report.md at its top, and returns the tables under their headings.
func renderAll(dir string, signing func(sub string) *results.Signing) (string, error) {
	index, err := results.ReadScenarioIndex(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range index.Scenarios {
		table, err := render(filepath.Join(dir, e.Dir), signing(e.Dir))
		if err != nil {
			return "", fmt.Errorf("scenario %s: %w", e.Scenario, err)
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n", results.ScenarioTitle[e.Scenario], table)
	}
	if err := WriteIndex(dir); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WriteIndex writes the report.md at the top of a --scenario all bundle,
// so a reader opens one file: each scenario's heading, whether it failed,
// its table as its own table.md holds it, and links to its report.md and
// ladder. It reads what the scenarios' bundles hold and renders none of
// them again; a scenario whose bundle holds no table says so.
func WriteIndex(dir string) error {
	text, err := indexText(dir)
	if err != nil {
		return err
	}
	page, err := indexHTML(text)
	if err != nil {
		return err
	}
	if err := results.WriteFile(dir, FileHTML, page); err != nil {
		return err
	}
	if err := results.WriteFile(dir, results.FileReport, []byte(text)); err != nil {
		return err
	}
	// The top's seal covers scenarios.json, the index and every
	// scenario's files (their own SHA256SUMS among them).
	return results.Seal(dir, nil)
}

// indexText is the report.md at the top of a --scenario all bundle, as
// its scenarios' bundles give it now.
func indexText(dir string) (string, error) {
	index, err := results.ReadScenarioIndex(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# tierbench run, every scenario\n\n")
	fmt.Fprintf(&b, "This run measured the reference's %d scenarios one after another, each into a bundle of its own below this directory (indexed by %s). Each section is that bundle's table; its report.md holds the evidence behind every number, and `tierbench report --verify` checks each bundle against its own checksums.\n\n",
		len(index.Scenarios), results.FileScenarios)
	for _, e := range index.Scenarios {
		sub := filepath.Join(dir, e.Dir)
		fmt.Fprintf(&b, "## %s\n\n", scenarioHeading(e.Scenario))
		if e.Error != "" {
			fmt.Fprintf(&b, "**The scenario did not finish cleanly:** %s\n\n", oneLine(e.Error))
		}
		table, err := os.ReadFile(filepath.Join(sub, results.FileTable))
		switch {
		case errors.Is(err, os.ErrNotExist):
			b.WriteString("No table: the scenario's bundle holds none.\n\n")
		case err != nil:
			return "", fmt.Errorf("report: scenario %s: %w", e.Scenario, err)
		default:
			fmt.Fprintf(&b, "%s\n", table)
		}
		links := []string{link(e.Dir, FileHTML, "page"), link(e.Dir, results.FileReport, "report"), link(e.Dir, results.FileTable, "table"), link(e.Dir, results.FileResults, "results")}
		if _, err := os.Stat(filepath.Join(sub, FileLadderMarkdown)); err == nil {
			links = append(links, link(e.Dir, FileLadderMarkdown, "where the time goes (ladder)"))
		}
		fmt.Fprintf(&b, "Bundle %s/: %s.\n\n", e.Dir, strings.Join(links, ", "))
	}
	return b.String(), nil
}

// verifyTop checks the files of a --scenario all bundle against the
// top's SHA256SUMS, which covers scenarios.json and every scenario's
// files, printing a line per finding; what holds is said on the index's
// ok line (one ok line for the top), so it returns the files that matched.
func verifyTop(dir string, w io.Writer) (int, error) {
	in, err := results.CheckFiles(dir)
	if err != nil {
		return 0, err
	}
	if !in.Sealed {
		fmt.Fprintf(w, "UNCOVERED %s: no %s at the top: nothing vouches for its %s (written before the top was sealed; `tierbench report %s` seals it)\n", dir, results.FileSums, results.FileScenarios, dir)
		return 0, fmt.Errorf("%w: %s: no %s at the top: nothing vouches for its %s", results.ErrNoChecksums, dir, results.FileSums, results.FileScenarios)
	}
	for _, f := range in.Findings {
		fmt.Fprintf(w, "FAIL %s\n", f)
	}
	if len(in.Findings) > 0 {
		return 0, fmt.Errorf("%w: %s: %s", results.ErrTampered, dir, strings.Join(in.Findings, "; "))
	}
	return in.Files, nil
}

// verifyIndex checks the report.md at the top of a --scenario all bundle:
// it holds no number of its own, only the scenarios' tables and links, so
// it must be what their bundles give now, byte for byte.
func verifyIndex(dir string, w io.Writer, sealed int) error {
	want, err := indexText(dir)
	if err != nil {
		return err
	}
	got, err := os.ReadFile(filepath.Join(dir, results.FileReport))
	if err != nil {
		fmt.Fprintf(w, "FAIL %s is missing\n", results.FileReport)
		return fmt.Errorf("%w: %s: its %s is missing", results.ErrTampered, dir, results.FileReport)
	}
	if string(got) != want {
		fmt.Fprintf(w, "FAIL %s was edited: it is not what the scenarios' bundles give\n", results.FileReport)
		return fmt.Errorf("%w: %s: %s was edited: it is not what the scenarios' bundles give", results.ErrTampered, dir, results.FileReport)
	}
	wantPage, err := indexHTML(want)
	if err != nil {
		return err
	}
	if gotPage, err := os.ReadFile(filepath.Join(dir, FileHTML)); err != nil || !bytes.Equal(gotPage, wantPage) {
		fmt.Fprintf(w, "FAIL %s is missing or was edited: it is not what the scenarios' bundles give\n", FileHTML)
		return fmt.Errorf("%w: %s: %s is missing or was edited: it is not what the scenarios' bundles give", results.ErrTampered, dir, FileHTML)
	}
	also := ""
	if sealed > 0 {
		also = fmt.Sprintf(", and %d files below it match its %s", sealed, results.FileSums)
	}
	fmt.Fprintf(w, "ok %s: its %s and %s are what the scenarios' bundles give%s\n", dir, results.FileReport, FileHTML, also)
	return nil
}

// FileLadderMarkdown is the ladder as Markdown, beside ladder.json.
const FileLadderMarkdown = "ladder.md"

func scenarioHeading(s string) string {
	if t, ok := results.ScenarioTitle[s]; ok {
		return t
	}
	return s
}

func link(dir, file, text string) string {
	return fmt.Sprintf("[%s](%s)", text, filepath.ToSlash(filepath.Join(dir, file)))
}

// oneLine keeps an error on one Markdown line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
