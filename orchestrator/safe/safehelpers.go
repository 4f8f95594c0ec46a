package safe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tierbench/tierbench/internal/procfs"
)

// StartTime is field 22 of /proc/<pid>/stat (clock ticks since boot); 0
// when the process is gone.
func StartTime(pid int) uint64 {
	st, err := procfs.Root("/proc").ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// Alive reports whether pid is still the process that started at st.
func Alive(pid int, st uint64) bool {
	return st != 0 && StartTime(pid) == st
}

func ScanPid(line string, pid *int, st *uint64) bool {
	_, err := fmt.Sscanf(line, "%d %d", pid, st)
	return err == nil && *pid > 0
}

// SecretDirs are the directories of a run's secrets under the state dir:
// its TLS files, and the password file of --server-addr's clients. A run
// removes them when it ends; the next run removes those of a run killed
// before it could (removeStaleRun).
func SecretDirs(stateDir, runID string) []string {
	return []string{filepath.Join(stateDir, "tls-"+runID), filepath.Join(stateDir, "auth-"+runID)}
}

// DefaultDataDir is the data dir when neither --data nor TIERBENCH_DATA names one:
// in a directory of this user's (made 0700), on the disk below /var/tmp
// rather than a tmpfs, for O_DIRECT.
var DefaultDataDir = filepath.Join("/var/tmp", "tierbench-"+strconv.Itoa(os.Geteuid()), "data")
