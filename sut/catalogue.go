package sut

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// Server is one catalogue entry: how to start a server and what it can be
// asked.
type Server struct {
	// Name is how --server names it.
	Name string
	// Title is how the report names it.
	Title string
	// Self: the server is the tierbench binary running the command (its
	// own image under Docker, built by the run); Programs then only name it.
	Self bool
	// Programs start it on a host, in order of preference: without
	// --server-bin the first whose Binary is on PATH; with --server-bin
	// the one whose Binary ends as the given file does (GarnetServer.dll
	// runs under dotnet, GarnetServer by itself).
	Programs []Program
	// Image is the image a user pulls to run it under Docker (the one
	// the refusal's `docker pull` line names when none is given), and
	// Entrypoint the server's path in it, run with the flags as its
	// arguments whatever the image's own ENTRYPOINT holds.
	Image      string
	Entrypoint string
	// Args are its flags for each scenario it can run, as a command
	// template (template.go); a scenario not here is refused with
	// Refusals' sentence.
	Args map[string]string
	// Backends spells tierbench's device backends (libaio, uring) as the
	// server takes them in {backend}; nil: the storage scenario's backend
	// goes in as tierbench spells it.
	Backends map[string]string
	// Refusals say, per scenario it cannot run, why and what to do
	// instead.
	Refusals map[string]string
	// Tiering says what tier the server has, if any, and with what flags,
	// and why the catalogue does or does not use it.
	Tiering string
	// Evidence are the INFO fields it reports beyond /proc, each as
	// "section:field", the ones the report shows and the run checks.
	Evidence []string
	// Password is how it takes the run's password off its command line;
	// PasswordNone with NoPassword saying why it runs without one.
	Password   Password
	NoPassword string

	// parsed holds Custom's flags, parsed once from its template, and
	// given says its program is the template's first word: nothing to
	// look for and no --server-bin.
	parsed map[string]Template
	given  bool
}

// Program is one way to start a server on a host: Launcher (looked up
// on PATH) running Binary, or Binary itself when there is no launcher.
type Program struct {
	Launcher string
	Binary   string
}

// Scenario names the catalogue's Args and Refusals use.
const (
	storage     = results.ScenarioStorage
	memory      = results.ScenarioMemory
	localmemory = results.ScenarioLocalMemory
)

// redisArgs are the flags of Redis and the servers that took its command
// line (Valkey, KeyDB): no snapshot, no append-only file, the data dir
// for anything they write.
const redisArgs = "--port {port} --bind {bind} --dir {data} --save '' --appendonly no"

// inRAMOnly refuses the tiered scenarios for a server that keeps every
// key in RAM.
func inRAMOnly(title, why string) map[string]string {
	return map[string]string{
		storage: fmt.Sprintf("%s %s, so it cannot run --scenario storage, whose every GET must be a device read with O_DIRECT (Garnet and tierbench can); measure it with --scenario memory",
			title, why),
		localmemory: fmt.Sprintf("%s %s, so it cannot run --scenario localmemory, a tiered store on an in-RAM device (Garnet and tierbench can); measure it with --scenario memory",
			title, why),
	}
}

// garnetTiered are Garnet's tiered flags, the seed's scenario 2 line
// before its device flags.
const garnetTiered = "--port {port} --bind {bind} --memory {memory} --page {page} --segment {segment} --index {index} --storage-tier --logdir {data} "

// Catalogue lists the servers --server can name, tierbench first.
var Catalogue = []Server{
	{
		Name: "tierbench", Title: "tierbench", Self: true,
		Programs: []Program{{Binary: "tierbench"}},
		Image:    "tierbench:<hash of the binary>", Entrypoint: "/tierbench",
		Args: map[string]string{
			storage: "server --port {port} --bind {bind} --memory {memory} --page {page} --segment {segment} --index {index} " +
				"--storage-tier --logdir {data} --device-type native --device-io-backend {backend}",
			memory: "server --port {port} --bind {bind} --index {index}",
			localmemory: "server --port {port} --bind {bind} --index {index} --memory {memory} --page {page} --segment {segment} " +
				"--storage-tier --device-type localmemory --device-completion-threads 4 --device-throttle-limit 512",
		},
		Tiering:  "--storage-tier: the log beyond --memory on the device, read with O_DIRECT (libaio or io_uring), or on the in-RAM localmemory device",
		Password: PasswordAuthFile,
		Evidence: []string{"server:tierbench_version", "server:process_id", "store:Log.TailAddress", "store:Log.HeadAddress", "store:Device.CompletedReads"},
	},
	{
		Name: "garnet", Title: "Garnet",
		Programs: []Program{{Binary: "GarnetServer"}, {Launcher: "dotnet", Binary: "GarnetServer.dll"}},
		Image:    "ghcr.io/microsoft/garnet", Entrypoint: "/app/GarnetServer",
		Args: map[string]string{
			storage:     garnetTiered + "--device-type Native --device-io-backend {backend} --logger-level Warning",
			memory:      "--port {port} --bind {bind}",
			localmemory: garnetTiered + "--device-type LocalMemory --device-completion-threads 4 --device-throttle-limit 512 --logger-level Warning",
		},
		Backends: map[string]string{"libaio": "Libaio", "uring": "Uring"},
		Tiering:  "--storage-tier: the log beyond --memory on the device (Native: O_DIRECT through libaio or io_uring; LocalMemory: in RAM), the reference's scenarios 2 and 3",
		Evidence: []string{"server:garnet_version", "store:Log.TailAddress", "store:Log.HeadAddress"},
		Password: PasswordConfigImport,
	},
	{
		Name: "redis", Title: "Redis",
		Programs: []Program{{Binary: "redis-server"}},
		Image:    "redis", Entrypoint: "/usr/local/bin/redis-server",
		Args:     map[string]string{memory: redisArgs},
		Password: PasswordConfigFile,
		Refusals: inRAMOnly("Redis", "keeps every key in RAM and has no tier"),
		Tiering:  "none (Redis on Flash is Redis Enterprise's)",
		Evidence: []string{"server:redis_version", "server:process_id", "memory:used_memory", "keyspace:db0"},
	},
	{
		Name: "valkey", Title: "Valkey",
		Programs: []Program{{Binary: "valkey-server"}},
		Image:    "valkey/valkey", Entrypoint: "/usr/local/bin/valkey-server",
		Args:     map[string]string{memory: redisArgs},
		Password: PasswordConfigFile,
		Refusals: inRAMOnly("Valkey", "keeps every key in RAM and has no tier"),
		Tiering:  "none",
		Evidence: []string{"server:valkey_version", "server:process_id", "memory:used_memory", "keyspace:db0"},
	},
	{
		Name: "keydb", Title: "KeyDB",
		Programs: []Program{{Binary: "keydb-server"}},
		Image:    "eqalpha/keydb", Entrypoint: "/usr/local/bin/keydb-server",
		Args:     map[string]string{memory: redisArgs},
		Password: PasswordConfigFile,
		Refusals: inRAMOnly("KeyDB", "reads its FLASH tier (--storage-provider flash DIR) through RocksDB and the page cache, not with O_DIRECT"),
		Tiering:  "--storage-provider flash DIR: a RocksDB tier read through the page cache, not O_DIRECT, so not run",
		Evidence: []string{"server:redis_version", "server:process_id", "memory:used_memory", "keyspace:db0"},
	},
	{
		Name: "dragonfly", Title: "Dragonfly",
		Programs: []Program{{Binary: "dragonfly"}},
		Image:    "docker.dragonflydb.io/dragonflydb/dragonfly", Entrypoint: "/usr/local/bin/dragonfly",
		Args:     map[string]string{memory: "--port {port} --bind {bind} --dir {data} --dbfilename '' --logtostderr"},
		Password: PasswordFlagFile,
		Refusals: inRAMOnly("Dragonfly", "offloads only values of 64 bytes and more to its experimental tier (--tiered_prefix), not the store the reference tiers"),
		Tiering:  "--tiered_prefix PATH: experimental, moves only large values to disk, so not run",
		Evidence: []string{"server:dragonfly_version", "server:process_id", "memory:used_memory", "keyspace:db0"},
	},
}

// Names are the catalogue's names in order.
func Names() []string {
	out := make([]string, len(Catalogue))
	for i, s := range Catalogue {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the entry --server name names.
func Lookup(name string) (Server, error) {
	for _, s := range Catalogue {
		if s.Name == name {
			return s, nil
		}
	}
	return Server{}, fmt.Errorf("sut: unknown --server %q (want one of %s, or --server-cmd 'TEMPLATE' for another)", name, strings.Join(Names(), ", "))
}

// LookupList parses --server's comma-separated list: each name once.
func LookupList(list string) ([]Server, error) {
	var out []Server
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		s, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Server) bool { return o.Name == s.Name }) {
			return nil, fmt.Errorf("sut: --server names %s twice", name)
		}
		out = append(out, s)
	}
	return out, nil
}

// CustomName is the name a --server-cmd server has in the table.
const CustomName = "cmd"

// Custom is the entry of a server a --server-cmd template starts: its
// first word the program, the rest its flags for every scenario (what it
// really does is judged by the evidence, as for any server).
func Custom(template string) (Server, error) {
	t, err := ParseTemplate(template)
	if err != nil {
		return Server{}, err
	}
	if len(t.words[0].parts) != 1 || t.words[0].parts[0].name != "" {
		return Server{}, fmt.Errorf("sut: --server-cmd %q: the program, its first word, may not hold a placeholder", template)
	}
	if !t.Uses("port") {
		return Server{}, fmt.Errorf("sut: --server-cmd %q has no {port}: the run picks each server's port", template)
	}
	prog := t.words[0].parts[0].text
	args := Template{text: template, words: t.words[1:]}
	s := Server{
		Name: CustomName, Title: "--server-cmd",
		Programs:   []Program{{Binary: prog}},
		Entrypoint: prog,
		Args:       map[string]string{},
		Tiering:    "whatever the command starts: the scenario's evidence judges it",
		Evidence:   []string{"server:process_id"},
		NoPassword: "its template has no {password_file}, the file holding the run's password (one line), so it runs without one: put it where your server reads a password from a file",
	}
	if t.Uses("password_file") {
		s.Password, s.NoPassword = PasswordPlaceholder, ""
	}
	s.parsed, s.given = map[string]Template{}, true
	for _, sc := range results.Scenarios {
		s.Args[sc] = template
		s.parsed[sc] = args
	}
	return s, nil
}

// Supports returns nil when the server can run scenario, else its
// refusal sentence.
func (s Server) Supports(scenario string) error {
	if _, ok := s.Args[scenario]; ok {
		return nil
	}
	why := s.Refusals[scenario]
	if why == "" {
		why = fmt.Sprintf("%s has no set-up for it in the catalogue", s.Title)
	}
	return fmt.Errorf("sut: --server %s cannot run --scenario %s: %s", s.Name, scenario, why)
}

// flags are the server's flags for scenario with v filled in.
func (s Server) flags(scenario string, v Values) ([]string, error) {
	if err := s.Supports(scenario); err != nil {
		return nil, err
	}
	t, ok := s.parsed[scenario]
	if !ok {
		var err error
		if t, err = ParseTemplate(s.Args[scenario]); err != nil {
			return nil, fmt.Errorf("sut: --server %s, scenario %s: %w", s.Name, scenario, err)
		}
	}
	if s.Backends != nil && v.Backend != "" && t.Uses("backend") {
		b, ok := s.Backends[v.Backend]
		if !ok {
			return nil, fmt.Errorf("sut: --server %s has no device backend %q (it has %s)", s.Name, v.Backend, strings.Join(sortedKeys(s.Backends), ", "))
		}
		v.Backend = b
	}
	return t.Expand(v)
}

// Program picks how the server starts on a host: with bin ("" when
// --server-bin was not given) the program whose Binary ends as bin does,
// run on bin; without, the first program whose Binary is on PATH. It
// returns the argv before the flags: the launcher by name (exec finds it
// on PATH) and the server's file.
func (s Server) Program(bin string) ([]string, error) {
	if s.given {
		prog := s.Programs[0].Binary
		if bin != "" {
			return nil, fmt.Errorf("sut: --server-bin %s with --server-cmd: the template's first word, %s, is its program", bin, prog)
		}
		path, err := exec.LookPath(prog)
		if err != nil {
			return nil, fmt.Errorf("sut: --server-cmd: its program %s: %w", prog, err)
		}
		return []string{path}, nil
	}
	if bin != "" {
		for _, p := range s.Programs {
			if filepath.Ext(p.Binary) == filepath.Ext(bin) {
				return p.argv(bin), nil
			}
		}
		return nil, fmt.Errorf("sut: --server-bin %s: %s starts from %s", bin, s.Title, s.programList())
	}
	for _, p := range s.Programs {
		if p.Launcher != "" {
			continue // its file is a path, not a program on PATH
		}
		if path, err := exec.LookPath(p.Binary); err == nil {
			return p.argv(path), nil
		}
	}
	how := fmt.Sprintf("give --server-bin (%s)", s.programList())
	if s.Image != "" {
		how += fmt.Sprintf(", or run it under --runtime docker --server-image %s", s.Image)
	}
	return nil, fmt.Errorf("sut: --server %s: %s is not on PATH: %s", s.Name, s.Programs[0].Binary, how)
}

func (p Program) argv(file string) []string {
	if p.Launcher != "" {
		return []string{p.Launcher, file}
	}
	return []string{file}
}

// programList says which files start the server, for a refusal.
func (s Server) programList() string {
	var out []string
	for _, p := range s.Programs {
		if p.Launcher != "" {
			out = append(out, fmt.Sprintf("…/%s, run by %s", p.Binary, p.Launcher))
		} else {
			out = append(out, "…/"+p.Binary)
		}
	}
	return strings.Join(out, " or ")
}

// Process is the command line that starts the server for scenario on a
// host: prog (from Program) then its flags.
func (s Server) Process(scenario string, prog []string, v Values) ([]string, error) {
	f, err := s.flags(scenario, v)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(prog), f...), nil
}

// Container is how an image runs the server for scenario: the entrypoint
// that replaces the image's own, and the flags as its arguments, v.Data
// being the data dir's path inside the container.
func (s Server) Container(scenario string, v Values) (entrypoint, args []string, err error) {
	if s.Entrypoint == "" {
		return nil, nil, fmt.Errorf("sut: --server %s has no entrypoint for an image: run it as a process", s.Name)
	}
	f, err := s.flags(scenario, v)
	if err != nil {
		return nil, nil, err
	}
	return []string{s.Entrypoint}, f, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
