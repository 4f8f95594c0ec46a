package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNewerSchema is wrapped by the error of a bundle written by a newer
// tierbench: its fields may mean something this one does not know.
var ErrNewerSchema = errors.New("results: bundle schema is newer than this tierbench's")

// Opened is what a results bundle holds for a reader outside the run:
// the medians of results.json, the passes behind them and the host.
type Opened struct {
	Dir     string
	Results Results
	// Passes are the pass records of cells.jsonl; empty when the bundle
	// is a lone results.json.
	Passes []PassRecord
	// Fingerprint is fingerprint.json as written (hostcheck's document);
	// nil when the file is missing, "null" when the preflight failed.
	Fingerprint json.RawMessage
}

// Open reads the bundle at path, a bundle directory or its
// results.json. It refuses a bundle of a newer schema, naming both
// versions, and never writes to the bundle.
func Open(path string) (Opened, error) {
	dir := path
	if st, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Opened{}, missingError{fmt.Sprintf("results: no results bundle at %s: no such file or directory", path), err}
	} else if err != nil {
		return Opened{}, fmt.Errorf("results: open bundle: %w", err)
	} else if !st.IsDir() {
		dir = filepath.Dir(path)
		if filepath.Base(path) != FileResults {
			return Opened{}, fmt.Errorf("results: open bundle %s: want a bundle directory or its %s", path, FileResults)
		}
	}
	o := Opened{Dir: dir}
	if err := ReadJSON(dir, FileResults, &o.Results); err != nil {
		return Opened{}, err
	}
	if o.Results.Schema > SchemaVersion {
		return Opened{}, fmt.Errorf("%w: %s has schema_version %d, this tierbench reads up to %d",
			ErrNewerSchema, filepath.Join(dir, FileResults), o.Results.Schema, SchemaVersion)
	}
	passes, _, err := ReadCells(dir)
	if err != nil {
		return Opened{}, err
	}
	o.Passes = passes
	if b, err := os.ReadFile(filepath.Join(dir, FileFingerprint)); err == nil {
		o.Fingerprint = b
	} else if !errors.Is(err, os.ErrNotExist) {
		return Opened{}, fmt.Errorf("results: open bundle: %w", err)
	}
	return o, nil
}
