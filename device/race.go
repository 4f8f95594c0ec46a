//go:build race

package device

// raceEnabled says the package is built with -race, whose detector cannot
// see the ordering the kernel gives (see slot.published).
const raceEnabled = true
