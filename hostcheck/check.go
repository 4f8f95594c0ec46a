package hostcheck

import (
	"encoding/json"
	"fmt"
)

// Status is a check's outcome.
type Status int

// Outcomes, in increasing severity.
const (
	Pass Status = iota
	Warn
	Fail
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// MarshalJSON writes the status as "pass", "warn" or "fail".
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads "pass", "warn" or "fail".
func (s *Status) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("hostcheck: status: %w", err)
	}
	switch v {
	case "pass":
		*s = Pass
	case "warn":
		*s = Warn
	case "fail":
		*s = Fail
	default:
		return fmt.Errorf("hostcheck: status %q is not pass, warn or fail", v)
	}
	return nil
}

// Check is one line of the preflight table.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Check names, in the order the table lists them.
const (
	CheckNUMA      = "numa"
	CheckAIOMaxNr  = "aio-max-nr"
	CheckODirect   = "odirect"
	CheckIOUring   = "io_uring"
	CheckLibAIO    = "libaio"
	CheckDiskSpace = "disk-space"
	CheckMemory    = "memory"
	CheckDocker    = "docker"
	CheckFIO       = "fio"
	CheckFIOPinned = "fio-pinned"
)

// humanBytes writes a size with a binary unit, e.g. "3.5 GiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f %s", v, units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
