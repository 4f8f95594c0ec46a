package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

// FileSchema is the version of the plan file format (docs/plan-files.md).
// A reader refuses a newer one; fields are only ever added, so a plan of
// an older schema reads with the new fields' zeros.
const FileSchema = 1

// FileKind is a plan file's "kind", which tells it from other YAML.
const FileKind = "tierbench-plan"

// File is a plan file: what `tierbench plan` prints and `tierbench run
// --plan` reads. Workload decides what is measured; Rows, Dataset,
// Estimate are what this tierbench planned from it on the host that
// wrote the file, for a reader (run plans them again); Needs is what a
// host must give, checked before anything starts.
type File struct {
	Schema   int              `json:"schema"`
	Kind     string           `json:"kind"`
	Workload results.Workload `json:"workload"`
	Rows     []results.Row    `json:"rows,omitempty"`
	Dataset  *Dataset         `json:"dataset,omitempty"`
	Needs    Needs            `json:"needs"`
	Estimate *Estimate        `json:"estimate,omitempty"`
	// From names the bundle a plan was read from (its run id and host);
	// "" for a plan file.
	From string `json:"from,omitempty"`
}

// Dataset is the data a plan loads.
type Dataset struct {
	Keys        int64 `json:"keys"`
	RecordBytes int   `json:"record_bytes"`
	Bytes       int64 `json:"bytes"`
	// DiskBytes is what the data dir must hold free: the largest row's
	// log (load and updates; each row wipes the dir first) and, with fio,
	// its files, as large as the dataset. MemoryBytes is the RAM the
	// largest row's servers take (in-memory log and index per server,
	// and the dataset itself for the scenarios that keep it in RAM).
	DiskBytes   int64 `json:"disk_bytes"`
	MemoryBytes int64 `json:"memory_bytes"`
}

// Estimate is the time a plan takes as the run's progress line counts
// its phases before it has measured anything (the most where a phase
// may stop early).
type Estimate struct {
	Seconds float64 `json:"seconds"`
	Phases  []Phase `json:"phases"`
}

// Rates an estimate assumes of a host before the run has measured its
// own (each phase's estimate then corrects itself from what it measured).
const (
	// AssumedLoadKeysPerSec is a tierbench server's load through RESP
	// at the reference profile's shape on a 2-CPU host.
	AssumedLoadKeysPerSec = 400_000
	// AssumedWriteBytesPerSec is how fast a file is laid out on the
	// data dir's disk (fio's files, the ladder's Device rung's).
	AssumedWriteBytesPerSec = 200 << 20
)

// Phase is one kind of work of an Estimate: Count runs of Seconds each
// (UpTo: at most).
type Phase struct {
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds_each"`
	UpTo    bool    `json:"up_to,omitempty"`
}

// Needs is what a plan asks of the host that runs it. A host that cannot
// give it is refused before anything starts (CheckHost), naming what.
type Needs struct {
	// Runtime is docker or process, or auto (either).
	Runtime string `json:"runtime"`
	// NUMANodes is the nodes the pinned rows were planned on (server on
	// node 0, client on node 1 with 2 or more; CPU halves of one node
	// with 1); 0 when no row is pinned.
	NUMANodes int      `json:"numa_nodes,omitempty"`
	Backends  []string `json:"backends,omitempty"`
	// Servers are the catalogue servers besides tierbench's own: their
	// programs on PATH (or --server-bin) under the process runtime.
	Servers []string `json:"servers,omitempty"`
	// Images are the server images a docker run uses, as named (a digest
	// when the plan names one: NAME@sha256:…).
	Images []string `json:"images,omitempty"`
}

// NeedsOf is what c asks of a host; nodes is the NUMA node count the
// pinned rows were planned on.
func NeedsOf(c Config, nodes int) Needs {
	n := Needs{Runtime: c.Runtime, Backends: slices.Clone(c.Backends)}
	if slices.Contains(c.Pins, PinPinned) {
		n.NUMANodes = nodes
	}
	for _, s := range c.Servers {
		if s != results.OwnServer {
			n.Servers = append(n.Servers, s)
		}
	}
	if c.ServerImage != "" {
		n.Images = []string{c.ServerImage}
	}
	if c.ServerAddr != "" {
		n.Backends = nil
	}
	return n
}

// Host is what a host gives, as CheckHost asks it.
type Host struct {
	NUMANodes int
	// Docker is nil when the engine answers, else why not.
	Docker error
	// IOUring is nil when io_uring may be used, else why not.
	IOUring error
	// LookPath finds a program, as exec.LookPath does.
	LookPath func(string) (string, error)
	// Programs are the programs each catalogue server may run as (sut).
	Programs func(server string) []string
	// Image says whether the local engine holds an image; nil: unknown.
	Image func(name string) (bool, error)
}

// CheckHost returns every need of n the host h cannot give, one sentence
// each and joined, or nil. pull says a missing image may be pulled.
func CheckHost(n Needs, h Host, pull bool) error {
	var errs []error
	if n.Runtime == RuntimeDocker && h.Docker != nil {
		errs = append(errs, fmt.Errorf("the plan runs under Docker (runtime docker) and this host's engine does not answer: %v", h.Docker))
	}
	if n.NUMANodes > 0 && h.NUMANodes != n.NUMANodes {
		errs = append(errs, fmt.Errorf("the plan's pinned rows were planned on %d NUMA node(s) (%s) and this host has %d: a pinned row here would put server and client elsewhere",
			n.NUMANodes, pinWhere(n.NUMANodes), h.NUMANodes))
	}
	for _, b := range n.Backends {
		switch b {
		case "libaio", results.ScenarioMemory, results.ScenarioLocalMemory:
		case "uring":
			if h.IOUring != nil {
				errs = append(errs, fmt.Errorf("the plan has uring rows and this host cannot give io_uring: %v", h.IOUring))
			}
		default:
			errs = append(errs, fmt.Errorf("the plan names backend %q, which this tierbench does not know (libaio, uring)", b))
		}
	}
	if h.LookPath != nil && h.Programs != nil && n.Runtime != RuntimeDocker {
		for _, s := range n.Servers {
			progs := h.Programs(s)
			found := len(progs) == 0
			for _, p := range progs {
				if _, err := h.LookPath(p); err == nil {
					found = true
					break
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("the plan measures server %s and none of its programs (%s) is on this host's PATH (give --server-bin, or run it under Docker with --server-image)", s, strings.Join(progs, ", ")))
			}
		}
	}
	if h.Image != nil && !pull {
		for _, img := range n.Images {
			ok, err := h.Image(img)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("the plan runs image %s and this host's engine cannot say whether it holds it: %v", img, err))
			case !ok:
				errs = append(errs, fmt.Errorf("the plan runs image %s and this host's engine does not hold it (docker pull %s, or --pull)", img, img))
			}
		}
	}
	return errors.Join(errs...)
}

func pinWhere(nodes int) string {
	if nodes >= 2 {
		return "server on node 0, client on node 1"
	}
	return "server and client on CPU halves of one node"
}

// Marshal writes f as YAML (format "yaml" or "") or JSON ("json").
func (f File) Marshal(format string) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	switch format {
	case "json":
		return append(b, '\n'), nil
	case "", "yaml":
		// Through JSON, so the YAML's names are the JSON names the
		// bundle's plan.json uses, field by field; through a MapSlice,
		// so the fields keep the order of the struct (schema and kind
		// first) rather than yaml.JSONToYAML's alphabetical one.
		var doc yamlv2.MapSlice
		if err := yamlv2.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("plan: YAML of the plan: %w", err)
		}
		return yamlv2.Marshal(doc)
	}
	return nil, fmt.Errorf("%w: --format %q: want yaml or json", fault.ErrConfig, format)
}

// maxPlanBytes bounds a plan file read: a plan is a few kilobytes.
const maxPlanBytes = 1 << 20

// ReadFile reads a plan: a plan file (YAML or JSON, FileKind), a bundle's
// plan.json, or a bundle directory (its plan.json). A bundle's plan
// gives its workload, its rows and the NUMA nodes its pinned rows ran on.
func ReadFile(path string) (File, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, results.FilePlan)
	}
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("%w: --plan: %w", fault.ErrConfig, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxPlanBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("%w: --plan %s: %v", fault.ErrConfig, path, err)
	}
	if len(data) > maxPlanBytes {
		return File{}, fmt.Errorf("%w: --plan %s: larger than %d bytes, not a plan", fault.ErrConfig, path, maxPlanBytes)
	}
	return ParseFile(data, path)
}

// ParseFile parses a plan file or a bundle's plan.json read from where.
func ParseFile(data []byte, where string) (File, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return File{}, fmt.Errorf("%w: --plan %s: not YAML or JSON: %v", fault.ErrConfig, where, err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(js, &probe); err != nil {
		return File{}, fmt.Errorf("%w: --plan %s: want a mapping at the top: %v", fault.ErrConfig, where, err)
	}
	if _, ok := probe["config"]; ok {
		if _, ok := probe["workload"]; !ok {
			return bundlePlan(js, where)
		}
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields() // a misspelt field would be silently dropped
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("%w: --plan %s: %v", fault.ErrConfig, where, err)
	}
	switch {
	case f.Kind != FileKind:
		return File{}, fmt.Errorf("%w: --plan %s: kind %q, want %q (or a bundle's %s)", fault.ErrConfig, where, f.Kind, FileKind, results.FilePlan)
	case f.Schema < 1:
		return File{}, fmt.Errorf("%w: --plan %s: no schema (want 1..%d)", fault.ErrConfig, where, FileSchema)
	case f.Schema > FileSchema:
		return File{}, fmt.Errorf("%w: --plan %s: schema %d is newer than this tierbench's %d", fault.ErrConfig, where, f.Schema, FileSchema)
	}
	return f, nil
}

// bundlePlan reads a bundle's plan.json (results.Plan) as a plan.
func bundlePlan(js []byte, where string) (File, error) {
	var p results.Plan
	if err := json.Unmarshal(js, &p); err != nil {
		return File{}, fmt.Errorf("%w: --plan %s: a bundle's %s: %v", fault.ErrConfig, where, results.FilePlan, err)
	}
	if p.Schema > results.SchemaVersion {
		return File{}, fmt.Errorf("%w: --plan %s: schema_version %d is newer than %d", fault.ErrConfig, where, p.Schema, results.SchemaVersion)
	}
	if p.Workload.Scenario == results.ScenarioAll {
		return File{}, fmt.Errorf("%w: --plan %s: a --scenario all bundle's plan is in each scenario's directory", fault.ErrConfig, where)
	}
	f := File{Schema: FileSchema, Kind: FileKind, Workload: p.Workload, Rows: p.Rows,
		From: strings.TrimSpace(fmt.Sprintf("bundle run %s on %s", p.RunID, p.Hostname))}
	c := ConfigOf(p.Workload)
	f.Needs = NeedsOf(c, p.Nodes)
	// The runtime the run used, not the auto it may have been asked.
	if p.Runtime != "" {
		f.Needs.Runtime = p.Runtime
	}
	return f, nil
}

// hostFields are the recorded fields that say where and how this host
// runs a plan, not what it measures: a plan read elsewhere drops them
// (the run's defaults apply) unless the plan's author named them.
var hostFields = map[string]string{
	"OutDir": "out", "Resume": "resume", "Binary": "binary", "StateDir": "state-dir",
	"Silent": "silent", "MetricsAddr": "metrics-addr", "DataDir": "data", "DataDirs": "data",
	"ServerPID": "server-pid", "ServerPIDs": "server-pid", "Force": "force", "KeepData": "keep-data",
}

// Config is the configuration the plan's workload gives, before the
// flags beside --plan and the run's resolution: the fields of where this
// host runs it (out, state dir, binary, a data dir the plan's author did
// not name) are dropped.
func (f File) Config() Config {
	c := ConfigOf(f.Workload)
	v := reflect.ValueOf(&c).Elem()
	for field, flagName := range hostFields {
		if flagName == "data" && c.Explicit("data") || flagName == "server-pid" && c.ServerAddr != "" && c.Explicit("server-pid") {
			continue
		}
		fv := v.FieldByName(field)
		fv.Set(reflect.Zero(fv.Type()))
	}
	if c.Explicit("data") {
		c.DataDirs = nil // the list is split from DataDir again
		if len(f.Workload.DataDirs) > 1 {
			c.DataDir = strings.Join(f.Workload.DataDirs, ",")
		}
	}
	// The runtime a bundle's run used, not the auto it may have been
	// asked: a reproduction runs as the original ran, or is refused.
	if f.Needs.Runtime == RuntimeDocker || f.Needs.Runtime == RuntimeProcess {
		c.Runtime = f.Needs.Runtime
	}
	c.Given = slices.DeleteFunc(slices.Clone(c.Given), func(g string) bool {
		return g == "out" || g == "resume" || g == "binary" || g == "state-dir" || g == "silent" || g == "metrics-addr" || g == "force" || g == "keep-data"
	})
	return c
}

// NeedsEngine says the plan needs a Docker engine: it runs under Docker,
// or names images.
func (n Needs) NeedsEngine() bool { return n.Runtime == RuntimeDocker || len(n.Images) > 0 }
