package ladder

import (
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/plan"
)

// Part is the ladder as the facade registers it (plan.Part and
// plan.Adjuster): it says for itself which runs it cannot measure, and
// turns the profile's ladder off, saying so, where it could not run.
type Part struct{}

// Name is the ladder's name in the combination table and the messages.
func (Part) Name() string { return "ladder" }

// Supports refuses --ladder where its layers cannot be measured right:
// they run on this machine (not a server host), they are tierbench's
// own (no other server), its top server is plain TCP (no TLS) and it
// measures one memory size (no memory-tier sweep).
func (Part) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { refusals(c, bad) })
}

func refusals(c plan.Config, bad func(string, ...any)) {
	if !c.Ladder {
		return
	}
	if !c.ServerHostLocal() {
		bad("--ladder with --server-host is not supported: its fio, device and kv layers run on this machine, not the server host; leave --ladder out")
	}
	// The rest are refused only when asked for: Adjust turns the
	// profile's ladder off for them.
	if !c.Explicit("ladder") || c.ServerAddr != "" {
		return
	}
	if name, ok := foreign(c); ok {
		bad("--ladder measures tierbench's own layers below RESP; with --server %s leave --ladder out", name)
	}
	if tlsServers(c) {
		bad("--tls %s with --ladder is not supported: the ladder's top server is plain TCP; leave --ladder out", c.TLS)
	}
	if c.MemorySweep() != nil {
		bad("--memory %s (a memory-tier sweep) with --ladder is not supported: the ladder measures one memory size; leave --ladder out (--ladder=false with --profile reference)", c.Memory)
	}
}

// Adjust turns off the profile's ladder, not asked for, where Supports
// would refuse it, and notes the first reason why, in the order the run
// has always said them.
func (Part) Adjust(c *plan.Config) {
	if !c.Ladder || c.Explicit("ladder") {
		return
	}
	if !c.ServerHostLocal() {
		c.Ladder = false
		c.Notes = append(c.Notes, "ladder: off across hosts (its layers would run on this machine, not the server host)")
		return
	}
	if name, ok := foreign(*c); ok {
		c.Ladder = false
		c.Notes = append(c.Notes, fmt.Sprintf("ladder: off with --server %s (its layers are tierbench's own)", name))
		return
	}
	if c.MemorySweep() != nil {
		c.Ladder = false
		c.Notes = append(c.Notes, "ladder: off in a memory-tier sweep (its layers measure one --memory)")
		return
	}
	if tlsServers(*c) && c.ServerAddr == "" {
		c.Ladder = false
		c.Notes = append(c.Notes, "ladder: off with --tls (its top server is plain TCP)")
	}
}

// foreign names the first server of the run besides tierbench's own.
func foreign(c plan.Config) (string, bool) {
	servers, err := c.Systems()
	if err != nil {
		return "", false
	}
	if others := plan.Foreign(servers); len(others) > 0 {
		return others[0].Name, true
	}
	return "", false
}

// tlsServers says the servers a run starts speak TLS: --tls on or both
// (the values of plan.Config.TLS).
func tlsServers(c plan.Config) bool { return c.TLS == "on" || c.TLS == "both" }

// Flags asks for the ladder, for the combination table.
func (Part) Flags() string { return "--ladder" }

// Ask sets what Flags says.
func (Part) Ask(c *plan.Config) { c.Ladder, c.Given = true, append(c.Given, "ladder") }
