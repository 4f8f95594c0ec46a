package tlsrow

import (
	"slices"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Modes of Config.TLS.
const (
	On   = "on"
	Off  = "off"
	Both = "both"
)

// Dimension is --tls in the facade's registry (a plan.Dimension and a
// plan.Example): every row over TLS, in clear, or both.
type Dimension struct{}

func (Dimension) Name() string { return "tls" }
func (Dimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { Validate(c, bad) })
}
func (Dimension) Expand(c plan.Config, rows []results.Row) []results.Row {
	return Rows(c, rows)
}
func (Dimension) Flags() string      { return "--tls both" }
func (Dimension) Ask(c *plan.Config) { c.TLS = Both }

// Validate refuses TLS where the run cannot give it.
func Validate(c plan.Config, bad func(string, ...any)) {
	switch c.TLS {
	case "", On, Off, Both:
	default:
		bad("--tls %q: want on, off or both", c.TLS)
		return
	}
	on := c.TLS == On || c.TLS == Both
	if c.ServerAddr != "" {
		if c.TLS == Both {
			bad("--tls both with --server-addr: the server at --server-addr has the one port it was started with; measure each port in a run of its own (--server-addr rediss://… and redis://…) and compare the bundles")
		}
		if on && !c.ServerTLS {
			bad("--tls on with --server-addr: give the server's TLS address as rediss://[user@]host:port")
		}
		return
	}
	if c.CACert != "" || c.Insecure {
		bad("--cacert and --insecure apply to --server-addr rediss://…: the servers a run starts get a CA made for the run")
	}
	if !on {
		return
	}
	switch {
	case c.MaxShards() > 1:
		bad("--tls %s with --shards above 1 is not supported: the shards' cluster bus and redirects are plain TCP; use --shards 1", c.TLS)
	case c.ForeignServers():
		bad("--tls %s measures tierbench's own server: the catalogue does not give other servers' TLS flags; run them with --tls off", c.TLS)
	}
}

// Rows makes TLS a row dimension: with --tls both every row twice,
// without TLS and then with it; with --tls on every row with it.
func Rows(c plan.Config, rows []results.Row) []results.Row {
	switch {
	case c.TLS == Both:
		return plan.ExpandRows(rows, []bool{false, true}, func(r *results.Row, on bool) { r.TLS = on })
	case c.TLS == On || c.ServerTLS:
		out := slices.Clone(rows)
		for i := range out {
			out[i].TLS = true
		}
		return out
	}
	return rows
}

// Word is how a progress line names a row's TLS.
func Word(on bool) string {
	if on {
		return "TLS"
	}
	return "plain TCP"
}

// ExternalWords says how the run reaches the server at --server-addr,
// never its password.
func ExternalWords(c plan.Config) string {
	s := ", " + Word(c.ServerTLS)
	if c.ServerUser != "" {
		s += " as user " + c.ServerUser
	}
	if c.ServerPassword != "" {
		s += " with a password (not kept in the bundle)"
	}
	return s
}
