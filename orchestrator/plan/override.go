package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// FlagFields maps each flag of `tierbench run` to the Config fields it
// sets, so a flag given beside --plan overrides exactly what it names.
// TestFlagFieldsCoverRun holds it to run's flag set: a flag missing here
// would be silently ignored beside a plan.
var FlagFields = map[string][]string{
	"profile": {"Profile"}, "scenario": {"Scenario"}, "ladder": {"Ladder"},
	"dbsize": {"DBSize"}, "keylength": {"KeyLength"}, "valuelength": {"ValueLength"},
	"threads": {"Threads"}, "batch": {"Batch"}, "cell-seconds": {"CellSeconds"}, "passes": {"Passes"},
	"warmup-seconds": {"WarmupSeconds"}, "load-threads": {"LoadThreads"}, "load-batch": {"LoadBatch"},
	"memory": {"Memory"}, "readcache-memory": {"ReadCacheMemory"}, "page": {"Page"}, "segment": {"Segment"}, "index": {"Index"},
	"backends": {"Backends"}, "pin": {"Pins"}, "data": {"DataDir", "DataDirs"}, "keep-data": {"KeepData"},
	"out": {"OutDir"}, "resume": {"Resume"}, "runtime": {"Runtime"}, "binary": {"Binary"},
	"server-host": {"ServerHost"}, "client-hosts": {"ClientHosts"}, "server-bind": {"ServerBind"},
	"server-addr": {"ServerAddr"}, "auth-file": {"AuthFile"}, "auth-env": {"AuthEnv"}, "tls": {"TLS"},
	"cacert": {"CACert"}, "insecure": {"Insecure"}, "server-pid": {"ServerPID", "ServerPIDs"},
	"shards": {"Shards"}, "skip-load": {"SkipLoad"}, "max-miss-ratio": {"MaxMissRatio"},
	"latency": {"Latency"}, "slo": {"SLO"}, "key-dist": {"KeyDist"}, "workload": {"Mix"}, "server-info": {"ServerInfo"},
	"force": {"Force"}, "no-fio": {"NoFio"}, "silent": {"Silent"},
	"metrics-addr": {"MetricsAddr"}, "server": {"Servers"}, "server-cmd": {"ServerCmd"},
	"server-bin": {"ServerBin"}, "server-image": {"ServerImage"}, "pull": {"Pull"}, "state-dir": {"StateDir"},
}

// Override sets on base every field the flags in given name, from
// flags, and returns the result with base's and given's names in Given,
// and one sentence per flag that changed what base said (the run prints
// each: a plan overridden unseen would not be the plan). An unknown flag
// name is an error, never skipped.
func Override(base, flags Config, given []string) (Config, []string, error) {
	out := base
	dst := reflect.ValueOf(&out).Elem()
	src := reflect.ValueOf(flags)
	var said []string
	for _, name := range given {
		fields, ok := FlagFields[name]
		if !ok {
			return base, nil, fmt.Errorf("plan: flag --%s has no field to override", name)
		}
		was, now := describeFields(dst, fields), describeFields(src, fields)
		for _, f := range fields {
			dst.FieldByName(f).Set(src.FieldByName(f))
		}
		// A field of where this host runs it the plan does not carry
		// (hostFields): setting it overrides nothing of the plan's.
		if _, host := hostFields[fields[0]]; was != now && !(host && was == "(none)") {
			said = append(said, fmt.Sprintf("--%s %s overrides the plan's %s", name, now, was))
		}
		if !slices.Contains(out.Given, name) {
			out.Given = append(slices.Clone(out.Given), name)
		}
	}
	return out, said, nil
}

// describeFields spells the first of fields as a flag takes it, lists
// with commas, "" as (none).
func describeFields(v reflect.Value, fields []string) string {
	f := v.FieldByName(fields[0])
	s := ""
	if f.Kind() == reflect.Slice {
		parts := make([]string, f.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(f.Index(i).Interface())
		}
		s = strings.Join(parts, ",")
	} else {
		s = fmt.Sprint(f.Interface())
	}
	if s == "" {
		return "(none)"
	}
	return s
}
