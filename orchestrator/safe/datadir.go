package safe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/orchestrator/fault"
)

// A data dir is the run's, provably. The invariants:
//
//   - A run only ever deletes what tierbench's own tools write there
//     (dataEntryOwned): segment files, fio's and the preflight's probe
//     files, the ladder's and the shards' subdirectories holding only
//     those, and the run's marker; and the directory it gives a server
//     other than tierbench (serverDir), marked when the run makes it,
//     with whatever that server wrote in it. Anything else in a data dir refuses the
//     run before it creates or starts anything, and is never deleted.
//   - The data dir is never "/", the home directory, the current directory
//     or a parent of either, nor the bundle's directory or a parent or
//     child of it (checkDataPath).
//   - One run at a time per data dir: the run holds an exclusive flock on
//     the directory for its life and writes dataMarker naming itself, so a
//     second run is refused naming the first.

// DataMarker is the file a run writes in each data dir it holds: its run
// id and pid, for the refusal of a second run and for a reader of the
// directory. It is the run's, and goes with the directory's other files.
const DataMarker = ".tierbench-run"

// dataTolerated are entries a data dir may hold that tierbench neither
// made nor touches: a file system's own.
var dataTolerated = []string{"lost+found"}

var (
	ownedFile = regexp.MustCompile(`^(segment\.(0|[1-9][0-9]*)|tierbench-fio\.[0-9]+|\.tierbench-odirect-[0-9]+|\.tierbench-run)$`)
	ownedDir  = regexp.MustCompile(`^(shard-[0-9]+|ladder-device|ladder-kv|ladder-fio)$`)
)

// serverDirName is the name of the directory a run gives a server other
// than tierbench in its data dir, and serverDirMarker the file the run
// writes in it when it makes it.
var serverDirName = regexp.MustCompile(`^server-[a-z0-9][a-z0-9-]*$`)

const serverDirMarker = ".tierbench-server"

// ServerDir makes the directory of the data dir the run gives the server
// name (server-NAME), marked as the run's, and returns its path: what a
// server that is not tierbench writes, the run cannot tell from a user's
// files by name, so such a server gets a directory of its own, emptied
// with the data dir.
func ServerDir(dataDir, name string) (string, error) {
	d := filepath.Join(dataDir, "server-"+name)
	if !serverDirName.MatchString(filepath.Base(d)) {
		return "", fmt.Errorf("orchestrator: server name %q cannot name a directory", name)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("orchestrator: data dir of server %s: %w", name, err)
	}
	if err := WriteNewFile(filepath.Join(d, serverDirMarker), []byte(name+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("orchestrator: data dir of server %s: %w", name, err)
	}
	return d, nil
}

// dataEntryOwned reports whether an entry of a data dir is one tierbench
// writes there: a file by its name, a directory by its name and contents
// (recursively), so a user's directory that happens to be called shard-0
// is not taken for ours; a server's directory by the marker the run wrote
// in it (serverDir).
func dataEntryOwned(dir string, e os.DirEntry) bool {
	switch {
	case e.Type().IsRegular():
		return ownedFile.MatchString(e.Name())
	case e.IsDir() && serverDirName.MatchString(e.Name()):
		st, err := os.Lstat(filepath.Join(dir, e.Name(), serverDirMarker))
		return err == nil && st.Mode().IsRegular()
	case e.IsDir() && ownedDir.MatchString(e.Name()):
		foreign, err := foreignEntries(filepath.Join(dir, e.Name()))
		return err == nil && len(foreign) == 0
	}
	return false
}

// foreignEntries lists the entries of dir that tierbench did not make; a
// missing dir has none.
func foreignEntries(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var foreign []string
	for _, e := range entries {
		if !slices.Contains(dataTolerated, e.Name()) && !dataEntryOwned(dir, e) {
			foreign = append(foreign, e.Name())
		}
	}
	return foreign, nil
}

// ErrForeignData is wrapped by the refusal of a data dir that holds files
// tierbench did not make.
var ErrForeignData = errors.New("orchestrator: data dir holds files tierbench did not make")

// checkDataContents refuses a data dir holding anything but tierbench's
// files, naming the first few.
func checkDataContents(dir string) error {
	foreign, err := foreignEntries(dir)
	if err != nil {
		return fmt.Errorf("orchestrator: read data dir %s: %w", dir, err)
	}
	if len(foreign) == 0 {
		return nil
	}
	shown := foreign[:min(len(foreign), 5)]
	more := ""
	if len(foreign) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(foreign)-len(shown))
	}
	return fmt.Errorf("%w: --data %s holds %s%s, which tierbench did not make and never deletes; give an empty or new directory, such as %s",
		ErrForeignData, dir, strings.Join(shown, ", "), more, filepath.Join(dir, "tierbench-data"))
}

// WipeDir empties a data dir of what tierbench wrote there (the marker
// stays: the run still holds the directory), creating it if missing. It
// deletes nothing when the directory holds anything else.
func WipeDir(dir string) error {
	if dir == "" || filepath.Clean(dir) == "/" {
		return fmt.Errorf("orchestrator: refusing to wipe data dir %q", dir)
	}
	if err := checkDataContents(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("orchestrator: wipe data dir %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() == DataMarker || slices.Contains(dataTolerated, e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("orchestrator: wipe data dir %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("orchestrator: create data dir %s: %w", dir, err)
	}
	return nil
}

// DataPlaces are the directories a data dir must stay clear of.
type DataPlaces struct {
	cwd, home, out string // absolute; an empty one is not checked
}

// checkDataPath refuses a data dir that is "/", the home directory, the
// current directory or a parent of either, or the bundle's directory, a
// parent or a child of it. dir and the places are absolute and clean.
func checkDataPath(dir string, at DataPlaces) error {
	refuse := func(what, instead string) error {
		return fmt.Errorf("%w: --data %s is %s: a run empties its data dir; %s", fault.ErrConfig, dir, what, instead)
	}
	suggest := "give a new directory of its own, such as " + DefaultDataDir
	switch {
	case dir == "/":
		return refuse("the root directory", suggest)
	case at.home != "" && within(at.home, dir):
		return refuse("your home directory "+at.home+" or a parent of it", "give a new directory below it, such as "+filepath.Join(at.home, "tierbench-data"))
	case at.cwd != "" && within(at.cwd, dir):
		return refuse("the current directory "+at.cwd+" or a parent of it", "give a new directory, such as "+filepath.Join(dir, "tierbench-data"))
	case at.out != "" && within(at.out, dir):
		return refuse("the results bundle --out "+at.out+" or a parent of it", suggest)
	case at.out != "" && within(dir, at.out):
		return refuse("inside the results bundle --out "+at.out, suggest)
	}
	return nil
}

// within reports whether path is dir or below it; both absolute and clean.
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// realPath is path with its symbolic links resolved as far as it exists,
// so that a link to the home directory is seen as the home directory.
func realPath(path string) string {
	missing := ""
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, missing)
		}
		if p == filepath.Dir(p) {
			return path
		}
		missing = filepath.Join(filepath.Base(p), missing)
	}
}

// LocalDataPlaces are this process's current directory and home and the
// bundle's directory, symbolic links resolved.
func LocalDataPlaces(out string) DataPlaces {
	var at DataPlaces
	if wd, err := os.Getwd(); err == nil {
		at.cwd = realPath(wd)
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		at.home = realPath(filepath.Clean(home))
	}
	if out != "" {
		if abs, err := filepath.Abs(out); err == nil {
			at.out = realPath(abs)
		}
	}
	return at
}

// DataClaim is a run's hold on one data dir: the flock on the directory
// and the marker naming the run.
type DataClaim struct {
	dir     string
	created bool // the run made the directory: it removes it at the end
	marked  bool // the run wrote the marker: it removes it at the end
	fd      int
}

// MarkerRecord is the marker's content.
type MarkerRecord struct {
	RunID   string    `json:"run_id"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// ClaimDataDir checks dir against the rules above and takes it for the
// run: a missing one is created, a held one refused naming its holder.
func ClaimDataDir(dir string, at DataPlaces, runID string) (*DataClaim, error) {
	if err := checkDataPath(realPath(dir), at); err != nil {
		return nil, err
	}
	return LockDataDir(dir, MarkerRecord{RunID: runID, PID: os.Getpid(), Started: time.Now().UTC()})
}

// LockDataDir takes dir for the run the marker names, whose path rules
// were checked where the run was planned: a missing one is created, a
// held one refused naming its holder, one holding files tierbench did not
// make refused naming them.
func LockDataDir(dir string, marker MarkerRecord) (*DataClaim, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%w: --data %s is not a directory", fault.ErrConfig, dir)
	}
	c := &DataClaim{dir: dir, fd: -1}
	// Directories made above it are the user's alone (0700): nobody else
	// can reach a link into the data dir's place.
	if err := CheckPrivateDir("--data", dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, fmt.Errorf("orchestrator: create data dir %s: %w", dir, err)
	}
	created, err := MakePrivateDir("--data", dir, 0o755)
	if err != nil {
		return nil, err
	}
	c.created = created
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		c.Release()
		return nil, fmt.Errorf("orchestrator: open data dir %s: %w", dir, err)
	}
	c.fd = fd
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		c.Release()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: --data %s is in use by %s; wait for it to end or give another --data", fault.ErrConfig, dir, holder(dir))
		}
		return nil, fmt.Errorf("orchestrator: lock data dir %s: %w", dir, err)
	}
	// Checked under the lock: a run that held the directory until now
	// has removed its files, and only what is there now counts.
	if err := checkDataContents(dir); err != nil {
		c.Release()
		return nil, fmt.Errorf("%w: %w", fault.ErrConfig, err)
	}
	rec, _ := json.Marshal(marker)
	if err := WriteNewFile(filepath.Join(dir, DataMarker), append(rec, '\n'), 0o644); err != nil {
		c.Release()
		return nil, fmt.Errorf("orchestrator: write the data dir's marker: %w", err)
	}
	c.marked = true
	return c, nil
}

// holder names the run a data dir's marker says holds it.
func holder(dir string) string {
	var m MarkerRecord
	data, err := os.ReadFile(filepath.Join(dir, DataMarker))
	if err != nil || json.Unmarshal(data, &m) != nil || m.RunID == "" {
		return "another run (its marker " + DataMarker + " is not readable yet)"
	}
	return fmt.Sprintf("run %s (pid %d, started %s)", m.RunID, m.PID, m.Started.Format(time.RFC3339))
}

// Release removes the marker (and the directory, when the run made it and
// it is empty) and drops the lock.
func (c *DataClaim) Release() {
	if c == nil {
		return
	}
	if c.marked {
		os.Remove(filepath.Join(c.dir, DataMarker))
	}
	if c.created {
		os.Remove(c.dir) // only when empty: what the run kept stays
	}
	if c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
}

// DefaultDataDir is the data dir when neither --data nor TIERBENCH_DATA names one:
// in a directory of this user's (made 0700), on the disk below /var/tmp
// rather than a tmpfs, for O_DIRECT.
var DefaultDataDir = filepath.Join("/var/tmp", "tierbench-"+strconv.Itoa(os.Geteuid()), "data")
