package sut

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// seedName is the reference's README, the project's seed, beside the
// repository as the project lays it out.
const seedName = "garnet-resp-benchmark-readme.txt"

const seedExcerpt = "testdata/garnet-seed-commands.txt"

// seedPath is the seed itself when it is beside the repository; "" when
// this clone has no shared/ beside it.
func seedPath(t *testing.T) string {
	p := filepath.Join(testenv.RepoRoot(t), "..", "shared", "seeds", seedName)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// seedCommands are Garnet's server flags for each scenario as the seed
// writes them: scenario 1's `dotnet $GS …` line, scenario 2's `numactl …
// dotnet $GS …` command over its continued lines with $DATA filled from
// its DATA= line, and scenario 3's as the seed says: scenario 2's with
// its device flags replaced by the `... --device-type LocalMemory ...`
// line's.
func seedCommands(t *testing.T, text string) map[string][]string {
	t.Helper()
	text = strings.ReplaceAll(text, "\\\n", " ")
	var mem, stor, local []string
	data := ""
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && strings.HasPrefix(f[0], "DATA=") && data == "":
			data = strings.TrimSuffix(strings.TrimPrefix(f[0], "DATA="), ";")
		case len(f) > 2 && f[0] == "dotnet" && f[1] == "$GS" && f[len(f)-1] == "&":
			got := f[2 : len(f)-1]
			if mem != nil && !slices.Equal(mem, got) {
				t.Fatalf("the seed starts the scenario 1 server two ways: %q and %q", mem, got)
			}
			mem = got
		case len(f) > 4 && f[0] == "numactl" && slices.Contains(f, "$GS") && f[len(f)-1] == "&":
			stor = f[slices.Index(f, "$GS")+1 : len(f)-1]
		case len(f) > 2 && f[0] == "..." && f[len(f)-1] == "..." && slices.Contains(f, "LocalMemory"):
			local = f[1 : len(f)-1]
		}
	}
	if mem == nil || stor == nil || local == nil || data == "" {
		t.Fatalf("seed: scenario 1 %q, scenario 2 %q, scenario 3 %q, DATA %q: want all four", mem, stor, local, data)
	}
	for i, w := range stor {
		stor[i] = strings.ReplaceAll(w, "$DATA", data)
	}
	// Scenario 3: the device flags (--device-…, each with its value)
	// replaced where they stood.
	var l3 []string
	for i := 0; i < len(stor); i++ {
		if strings.HasPrefix(stor[i], "--device-") {
			if local != nil {
				l3, local = append(l3, local...), nil
			}
			i++
			continue
		}
		l3 = append(l3, stor[i])
	}
	return map[string][]string{results.ScenarioMemory: mem, results.ScenarioStorage: stor, results.ScenarioLocalMemory: l3}
}

// seedValues are the seed's own: port 6379 on 127.0.0.1, its sizes and
// its DATA.
var seedValues = Values{Port: 6379, Bind: "127.0.0.1", Data: "/raid/garnet", Memory: "16m", Page: "4m", Segment: "1g", Index: "8g"}

// bindAdded is the one flag the catalogue adds to a seed line: scenario
// 1's line has no --bind (Garnet then listens where it likes), and the
// run proves the server on the address it binds, as scenario 2's line
// binds it.
var bindAdded = map[string][]string{results.ScenarioMemory: {"--bind", "127.0.0.1"}}

// TestGarnetFlagsAreTheSeeds holds the garnet entry's flags for every
// scenario and backend against the seed's command lines, flag for flag
// and in order; the uring rows differ from the seed's libaio line in the
// backend's value only, as the seed's sample results set it.
func TestGarnetFlagsAreTheSeeds(t *testing.T) {
	path := seedPath(t)
	if path == "" {
		path = seedExcerpt
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seed := seedCommands(t, string(text))
	garnet, err := Lookup("garnet")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range garnetCases() {
		t.Run(c.name(), func(t *testing.T) {
			v := seedValues
			v.Backend = c.backend
			got, err := garnet.Process(c.scenario, []string{"dotnet", "$GS"}, v)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"dotnet", "$GS"}, seed[c.scenario]...)
			if c.backend == "uring" {
				i := slices.Index(want, "--device-io-backend")
				want[i+1] = "Uring"
			}
			want = append(want, bindAdded[c.scenario]...)
			if !slices.Equal(got, want) {
				t.Errorf("got  %s\nwant %s (the seed's)", Quote(got), Quote(want))
			}
		})
	}
}

// TestSeedExcerptIsVerbatim: the excerpt the test reads when the seed is
// not beside the repository holds the seed's lines as they are.
func TestSeedExcerptIsVerbatim(t *testing.T) {
	path := seedPath(t)
	if path == "" {
		t.Skipf("no %s beside the repository: the excerpt cannot be checked here (it is in the project's workspace and CI)", seedName)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile(seedExcerpt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(seed), "\n")
	for _, l := range strings.Split(strings.TrimSpace(string(ex)), "\n") {
		if !strings.HasPrefix(l, "#") && !slices.Contains(lines, l) {
			t.Errorf("excerpt line %q: not a line of the seed", l)
		}
	}
}

type garnetCase struct{ scenario, backend string }

func (c garnetCase) name() string { return strings.TrimSuffix(c.scenario+"/"+c.backend, "/") }

// garnetCases are the scenarios × backends the catalogue runs Garnet in.
func garnetCases() []garnetCase {
	return []garnetCase{
		{results.ScenarioMemory, ""},
		{results.ScenarioStorage, "libaio"},
		{results.ScenarioStorage, "uring"},
		{results.ScenarioLocalMemory, ""},
	}
}

// TestGarnetCommandLinesGolden holds the garnet entry's whole command
// lines as the run starts them: the self-contained GarnetServer, the
// dll under dotnet, and the published image (entrypoint and arguments,
// the data dir at /data), for each scenario and backend.
func TestGarnetCommandLinesGolden(t *testing.T) {
	garnet, _ := Lookup("garnet")
	var b strings.Builder
	for _, c := range garnetCases() {
		v := seedValues
		v.Backend = c.backend
		for _, bin := range []string{"/opt/garnet/GarnetServer", "/opt/garnet/GarnetServer.dll"} {
			prog, err := garnet.Program(bin)
			if err != nil {
				t.Fatal(err)
			}
			argv, err := garnet.Process(c.scenario, prog, v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s process %s:\n  %s\n", c.name(), filepath.Base(bin), Quote(argv))
		}
		v.Data = "/data"
		ep, args, err := garnet.Container(c.scenario, v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s image %s:\n  entrypoint %s\n  args %s\n", c.name(), garnet.Image, Quote(ep), Quote(args))
	}
	testenv.MustMatchGolden(t, "testdata/garnet.golden", []byte(b.String()), *update)
}

// TestCatalogueEntriesParse: every entry's templates parse, a scenario
// it has no flags for has a refusal sentence, and its backends cover
// tierbench's.
func TestCatalogueEntriesParse(t *testing.T) {
	for _, s := range Catalogue {
		for _, sc := range results.Scenarios {
			if _, ok := s.Args[sc]; ok {
				if _, err := s.flags(sc, seedValues); err != nil {
					t.Errorf("%s %s: %v", s.Name, sc, err)
				}
				continue
			}
			err := s.Supports(sc)
			if err == nil || s.Refusals[sc] == "" {
				t.Errorf("%s cannot run %s: got refusal %v, want a sentence of its own", s.Name, sc, err)
			}
		}
		if s.Backends != nil {
			for _, b := range []string{"libaio", "uring"} {
				if s.Backends[b] == "" {
					t.Errorf("%s spells no backend %s", s.Name, b)
				}
			}
		}
		if len(s.Evidence) == 0 || s.Tiering == "" || s.Title == "" || len(s.Programs) == 0 {
			t.Errorf("%s: an entry says its title, programs, tiering and evidence", s.Name)
		}
	}
}

// TestScenarioSupport is the catalogue's scenario matrix: storage and
// localmemory need a tiered store (Garnet, tierbench), memory any server.
func TestScenarioSupport(t *testing.T) {
	want := map[string][]string{
		results.ScenarioStorage:     {"tierbench", "garnet"},
		results.ScenarioMemory:      {"tierbench", "garnet", "redis", "valkey", "keydb", "dragonfly"},
		results.ScenarioLocalMemory: {"tierbench", "garnet"},
	}
	for sc, names := range want {
		var got []string
		for _, s := range Catalogue {
			if s.Supports(sc) == nil {
				got = append(got, s.Name)
			}
		}
		if !slices.Equal(got, names) {
			t.Errorf("scenario %s: got %v, want %v", sc, got, names)
		}
	}
	redis, _ := Lookup("redis")
	err := redis.Supports(results.ScenarioStorage)
	if err == nil || !strings.Contains(err.Error(), "--server redis cannot run --scenario storage: Redis keeps every key in RAM") {
		t.Errorf("got %v, want the refusal naming redis, the scenario and why", err)
	}
}

func TestLookupList(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"tierbench,redis", "tierbench redis", ""},
		{"garnet", "garnet", ""},
		{" redis , dragonfly", "redis dragonfly", ""},
		{"redis,redis", "", "names redis twice"},
		{"memcached", "", `unknown --server "memcached" (want one of tierbench, garnet, redis, valkey, keydb, dragonfly`},
		{"", "", `unknown --server ""`},
	} {
		got, err := LookupList(c.in)
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("LookupList(%q): got error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(names, " ") != c.want {
			t.Errorf("LookupList(%q): got %v, %v; want %s", c.in, names, err, c.want)
		}
	}
}

// TestProgram: --server-bin picks the launcher by the file's kind; without
// it the server must be on PATH, and the refusal says what to give.
func TestProgram(t *testing.T) {
	garnet, _ := Lookup("garnet")
	for _, c := range []struct {
		bin  string
		want []string
		err  string
	}{
		{"/opt/g/GarnetServer", []string{"/opt/g/GarnetServer"}, ""},
		{"/opt/g/GarnetServer.dll", []string{"dotnet", "/opt/g/GarnetServer.dll"}, ""},
		{"/opt/g/garnet.exe", nil, "--server-bin /opt/g/garnet.exe: Garnet starts from …/GarnetServer or …/GarnetServer.dll, run by dotnet"},
	} {
		got, err := garnet.Program(c.bin)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Program(%q): got %v, %v; want error containing %q", c.bin, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Program(%q): got %q, %v; want %q", c.bin, got, err, c.want)
		}
	}
	// A PATH without GarnetServer (no .NET on these machines).
	t.Setenv("PATH", t.TempDir())
	_, err := garnet.Program("")
	want := "sut: --server garnet: GarnetServer is not on PATH: give --server-bin (…/GarnetServer or …/GarnetServer.dll, run by dotnet), or run it under --runtime docker --server-image ghcr.io/microsoft/garnet"
	if err == nil || err.Error() != want {
		t.Errorf("got %v,\nwant %s", err, want)
	}
}

// TestRedisOnPath: redis-server, installed by scripts/install-deps.sh, is
// found on PATH and started with no snapshot and no AOF.
func TestRedisOnPath(t *testing.T) {
	path := testenv.MustLookPath(t, "redis-server")
	redis, _ := Lookup("redis")
	prog, err := redis.Program("")
	if err != nil || !slices.Equal(prog, []string{path}) {
		t.Fatalf("got %q, %v; want [%s]", prog, err, path)
	}
	argv, err := redis.Process(results.ScenarioMemory, prog, Values{Port: 7000, Bind: "127.0.0.1", Data: "/tmp/d"})
	want := []string{path, "--port", "7000", "--bind", "127.0.0.1", "--dir", "/tmp/d", "--save", "", "--appendonly", "no"}
	if err != nil || !slices.Equal(argv, want) {
		t.Errorf("got %q, %v; want %q", argv, err, want)
	}
}

// TestTierbenchEntryBackend: tierbench's own backends go in as they are.
func TestTierbenchEntryBackend(t *testing.T) {
	tb, _ := Lookup("tierbench")
	v := seedValues
	v.Backend = "uring"
	got, err := tb.Process(results.ScenarioStorage, []string{"tierbench"}, v)
	if err != nil || !slices.Contains(got, "uring") || got[1] != "server" {
		t.Errorf("got %q, %v; want tierbench server … --device-io-backend uring", got, err)
	}
	g, _ := Lookup("garnet")
	v.Backend = "spdk"
	if _, err := g.Process(results.ScenarioStorage, nil, v); err == nil || !strings.Contains(err.Error(), `no device backend "spdk" (it has libaio, uring)`) {
		t.Errorf("got %v, want the backends Garnet has", err)
	}
}
