package plan

import (
	"errors"
	"fmt"

	"github.com/tierbench/tierbench/results"
)

// Part is a measurement, dimension or runtime that has a say over a
// configuration. The facade's registry lists every part; Validate asks
// each one, so a part's refusals live with the part, not here.
type Part interface {
	// Name is how the combination table and the messages name the part.
	Name() string
	// Supports returns every reason the part cannot run c, joined, or
	// nil. It is asked of every configuration, whether or not c uses the
	// part: a part not asked for says nil.
	Supports(c Config) error
}

// Adjuster is a Part with profile defaults it may turn off: Adjust
// drops, before Validate, what the profile set and c cannot have, noting
// each in c's notes, so that a default never becomes a refusal.
type Adjuster interface {
	Part
	Adjust(c *Config)
}

// Refusals collects refusals in the bad(format, args…) form the parts'
// checks use and returns them joined.
func Refusals(check func(bad func(format string, a ...any))) error {
	var errs []error
	check(func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) })
	return errors.Join(errs...)
}

// Attached is what a run learns of the server at --server-addr when it
// attaches, before anything is created: what no flag says.
type Attached struct {
	// Cluster says the server is a cluster node: the rows measure its
	// masters.
	Cluster bool
}

// AttachChecker is a Part with something to say of the server a run
// attaches to: CheckAttached refuses c against it, or turns off a
// profile default c cannot have there and returns the sentence that
// says so ("" for none).
type AttachChecker interface {
	Part
	CheckAttached(c *Config, a Attached) (note string, err error)
}

// Example is a Part that says, for the combination table, how a command
// line asks for it: Flags as a user types them, and Ask setting them on
// a configuration.
type Example interface {
	Part
	Flags() string
	Ask(c *Config)
}

// Dimension is a Part that multiplies the run's rows: Expand returns
// every row once per value c gives the dimension (the rows themselves
// when c gives it none). The facade expands in the registry's order.
type Dimension interface {
	Part
	Expand(c Config, rows []results.Row) []results.Row
}
