package loghist

import "time"

// epoch is the origin of Now; a monotonic reading, so Now never jumps with
// the wall clock.
var epoch = time.Now()

// sinceEpoch is Now through the Go runtime's clock: the kernel's vDSO
// clock_gettime, dearer on the test host than the time-stamp counter read
// directly (see clock_amd64.go).
func sinceEpoch() int64 { return int64(time.Since(epoch)) }

// clocksourcePath names the kernel's current clocksource.
const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
