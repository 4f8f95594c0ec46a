package report

import (
	"flag"
	"io"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// referencePlan is the reference's four rows with three passes.
func referencePlan() results.Plan {
	return bundletest.ReferencePlan(bundletest.ReferenceWorkload())
}

// writeBundle writes the raw records of a finished reference bundle.
func writeBundle(t *testing.T, fio bool) string {
	return bundletest.WriteBundle(t, referencePlan(), fio)
}

var referencePasses = bundletest.ReferencePasses

// runReport is what `tierbench report [--verify] dir` does.
func runReport(dir string, verify bool, w io.Writer) error {
	if verify {
		return Verify(dir, w)
	}
	table, err := Render(dir)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, table)
	return err
}

// renderedBundle writes the reference bundle with the fio baseline,
// renders it and reads back its results.json.
func renderedBundle(t *testing.T) (string, results.Results) {
	t.Helper()
	dir := writeBundle(t, true)
	if _, err := render(dir, nil); err != nil {
		t.Fatal(err)
	}
	var res results.Results
	if err := results.ReadJSON(dir, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	return dir, res
}
