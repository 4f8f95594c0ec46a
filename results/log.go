package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CellsLog appends records to cells.jsonl, each followed by an fsync, so
// that a cell finished before a crash or a signal is never lost.
type CellsLog struct {
	f *os.File
}

// OpenCellsLog opens dir's cells.jsonl for appending, creating it.
func OpenCellsLog(dir string) (*CellsLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, FileCells), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("results: open cells log: %w", err)
	}
	return &CellsLog{f: f}, nil
}

func (l *CellsLog) Append(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("results: encode cell record: %w", err)
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("results: append to %s: %w", l.f.Name(), err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("results: fsync %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close closes the log; every record appended is already on disk.
func (l *CellsLog) Close() error { return l.f.Close() }

// ReadCells reads cells.jsonl. A torn last line (the process died while
// writing it) is dropped; a bad line elsewhere is an error naming it.
func ReadCells(dir string) ([]PassRecord, []LoadRecord, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileCells))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results: read cells: %w", err)
	}
	return ParseCells(data)
}

// ParseCells parses cells.jsonl's pass and load records.
func ParseCells(data []byte) ([]PassRecord, []LoadRecord, error) {
	passes, loads, _, err := ParseCellsAll(data)
	return passes, loads, err
}

// ReadFailures returns the fail records of cells.jsonl.
func ReadFailures(dir string) ([]FailRecord, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileCells))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: read cells: %w", err)
	}
	_, _, fails, err := ParseCellsAll(data)
	return fails, err
}

// ParseCellsAll parses every record of cells.jsonl, as ReadCells says.
func ParseCellsAll(data []byte) ([]PassRecord, []LoadRecord, []FailRecord, error) {
	var fails []FailRecord
	var passes []PassRecord
	var loads []LoadRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	complete := len(data) == 0 || data[len(data)-1] == '\n'
	total := bytes.Count(data, []byte{'\n'})
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var head struct {
			Kind   string `json:"kind"`
			Schema int    `json:"schema_version"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			if !complete && line == total+1 {
				break // torn final line
			}
			return nil, nil, nil, fmt.Errorf("results: %s line %d: %w", FileCells, line, err)
		}
		if head.Schema > SchemaVersion {
			return nil, nil, nil, fmt.Errorf("results: %s line %d: schema_version %d is newer than this tierbench's %d", FileCells, line, head.Schema, SchemaVersion)
		}
		switch head.Kind {
		case "pass":
			var p PassRecord
			if err := json.Unmarshal(b, &p); err != nil {
				return nil, nil, nil, fmt.Errorf("results: %s line %d: %w", FileCells, line, err)
			}
			passes = append(passes, p)
		case "load":
			var l LoadRecord
			if err := json.Unmarshal(b, &l); err != nil {
				return nil, nil, nil, fmt.Errorf("results: %s line %d: %w", FileCells, line, err)
			}
			loads = append(loads, l)
		case "fail":
			var f FailRecord
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, nil, nil, fmt.Errorf("results: %s line %d: %w", FileCells, line, err)
			}
			fails = append(fails, f)
		default:
			return nil, nil, nil, fmt.Errorf("results: %s line %d: unknown kind %q", FileCells, line, head.Kind)
		}
	}
	return passes, loads, fails, sc.Err()
}

// WriteJSON writes v to dir/name atomically (temp file, fsync, rename).
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encode %s: %w", name, err)
	}
	return WriteFile(dir, name, append(b, '\n'))
}

// WriteFile writes data to dir/name atomically (temp file, fsync,
// rename): a reader never sees half a file.
func WriteFile(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o666) // os.Create, not through a link
	if err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("results: fsync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	return nil
}

// ReadJSON decodes dir/name into v; errors name the file. A missing
// directory or file gets an error that says which, wrapping the one
// that found it (fs.ErrNotExist for a missing file).
func ReadJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		st, serr := os.Stat(dir)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			return missingError{fmt.Sprintf("results: no results bundle at %s: no such directory", dir), err}
		case serr == nil && !st.IsDir():
			return missingError{fmt.Sprintf("results: no results bundle at %s: not a directory", dir), err}
		case errors.Is(err, fs.ErrNotExist):
			return missingError{fmt.Sprintf("results: %s has no %s: not a results bundle, or not a finished one", dir, name), err}
		}
		return fmt.Errorf("results: read bundle: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("results: %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// missingError says what of a bundle is missing in words of its own,
// and unwraps to the error that found it (fs.ErrNotExist).
type missingError struct {
	msg string
	err error
}

func (e missingError) Error() string { return e.msg }
func (e missingError) Unwrap() error { return e.err }

// AppendJSONL appends rec as one fsynced line to dir/name, as cells.jsonl
// is written, so a record finished before a crash is never lost.
func AppendJSONL(dir, name string, rec any) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("results: open %s: %w", name, err)
	}
	l := CellsLog{f: f}
	defer l.Close()
	return l.Append(rec)
}

// ReadOptional reads dir/name; nil, nil when the bundle has no such file.
func ReadOptional(dir, name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: read %s: %w", name, err)
	}
	return data, nil
}

// ParseJSONLines decodes one T a line of data, the file name; a torn last
// line is dropped, and check, when not nil, may refuse a record that
// decoded.
func ParseJSONLines[T any](data []byte, name string, check func(T) error) ([]T, error) {
	var out []T
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var rec T
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			if i == len(lines)-1 {
				break // torn final line: the process died writing it
			}
			return nil, fmt.Errorf("results: %s line %d: %w", name, i+1, err)
		}
		if check != nil {
			if err := check(rec); err != nil {
				return nil, fmt.Errorf("results: %s line %d: %w", name, i+1, err)
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// ReadLatency reads latency.jsonl; a torn last line is dropped.
func ReadLatency(dir string) ([]LatencyRecord, error) {
	return readLines(dir, FileLatency, ParseLatency)
}

// ParseLatency parses latency.jsonl, refusing a newer schema.
func ParseLatency(data []byte) ([]LatencyRecord, error) {
	return ParseJSONLines(data, FileLatency, func(rec LatencyRecord) error { return checkKind("latency", rec.Kind, rec.Schema) })
}

// readLines reads the optional JSON-lines file name of the bundle at dir
// with parse; none when the bundle has no such file.
func readLines[T any](dir, name string, parse func([]byte) ([]T, error)) ([]T, error) {
	data, err := ReadOptional(dir, name)
	if data == nil || err != nil {
		return nil, err
	}
	return parse(data)
}

// checkKind refuses a record of another kind than want, or of a newer
// schema than this tierbench's.
func checkKind(want, kind string, schema int) error {
	if schema > SchemaVersion {
		return fmt.Errorf("schema_version %d is newer than this tierbench's %d", schema, SchemaVersion)
	}
	if kind != want {
		return fmt.Errorf("unknown kind %q", kind)
	}
	return nil
}

// ReadCeilings reads ceilings.jsonl; a torn last line is dropped.
func ReadCeilings(dir string) ([]CeilingRecord, error) {
	data, err := ReadOptional(dir, FileCeilings)
	if data == nil || err != nil {
		return nil, err
	}
	return ParseCeilings(data)
}

// ParseCeilings parses ceilings.jsonl, refusing a newer schema.
func ParseCeilings(data []byte) ([]CeilingRecord, error) {
	var out []CeilingRecord
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var c CeilingRecord
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			if i == len(lines)-1 {
				break // torn final line: the process died writing it
			}
			return nil, fmt.Errorf("results: %s line %d: %w", FileCeilings, i+1, err)
		}
		if c.Kind != "ceiling" || c.Schema > SchemaVersion {
			return nil, fmt.Errorf("results: %s line %d: kind %q schema_version %d, want ceiling ≤ %d", FileCeilings, i+1, c.Kind, c.Schema, SchemaVersion)
		}
		out = append(out, c)
	}
	return out, nil
}

// ReadHostsLatency reads hosts/latency.jsonl; a torn last line is dropped.
func ReadHostsLatency(dir string) ([]HostsLatencyRecord, error) {
	data, err := ReadOptional(filepath.Join(dir, DirHosts), FileHostsLatency)
	if data == nil || err != nil {
		return nil, err
	}
	return ParseJSONLines[HostsLatencyRecord](data, filepath.Join(DirHosts, FileHostsLatency), nil)
}
