package server

import (
	"slices"
	"strings"
)

// commandSpec is one entry of the command table: what COMMAND INFO and
// COMMAND DOCS tell, and what dispatch checks before run is called.
type commandSpec struct {
	name string // lower case, as Redis names it in error messages
	// arity counts the command name: n means exactly n arguments, -n at
	// least n (Redis's convention).
	arity int
	flags commandFlags
	// acl holds the categories Redis lists explicitly for the command
	// (@string, @keyspace, ...); @read, @write, @fast, @slow, @admin and
	// @dangerous follow from flags as Redis derives them (see categories).
	acl aclCategories
	// firstKey, lastKey and keyStep locate the key arguments as COMMAND
	// INFO reports them: lastKey -1 is the last argument, 0 0 0 no keys.
	firstKey, lastKey, keyStep int
	run                        func(c *conn, args [][]byte)
	group                      string // COMMAND DOCS group: string, generic, server, ...
	summary                    string
}

// commandFlags are Redis's command flags, in the order COMMAND INFO lists
// them, followed by tierbench's own, which COMMAND INFO does not show.
type commandFlags uint32

const (
	flagWrite commandFlags = 1 << iota
	flagReadonly
	flagDenyOOM
	flagAdmin
	flagNoScript
	flagLoading
	flagStale
	flagSkipSlowlog
	flagFast
	flagNoAuth // allowed before AUTH succeeds
	flagNoMulti
	flagAllowBusy

	// flagDrain: wait for the batch's pending device reads before running,
	// so a GET pipelined before a SET of the same key never sees the
	// SET, whatever order the store completes reads in.
	flagDrain
	// flagTxControl: MULTI, EXEC, DISCARD, WATCH, QUIT run at once inside
	// a transaction instead of being queued.
	flagTxControl
)

// flagNames are the Redis names of the visible flags, bit by bit.
var flagNames = []string{"write", "readonly", "denyoom", "admin", "noscript", "loading", "stale",
	"skip_slowlog", "fast", "no_auth", "no_multi", "allow_busy"}

// aclCategories are Redis's ACL categories, in the order Redis lists them.
type aclCategories uint32

const (
	aclKeyspace aclCategories = 1 << iota
	aclRead
	aclWrite
	aclSet
	aclSortedSet
	aclList
	aclHash
	aclString
	aclAdmin
	aclFast
	aclSlow
	aclDangerous
	aclConnection
	aclTransaction
)

var aclNames = []string{"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
	"@admin", "@fast", "@slow", "@dangerous", "@connection", "@transaction"}

// categories are the command's ACL categories: the explicit ones and those
// Redis derives from the flags (write, readonly, admin, fast or else slow).
func (s *commandSpec) categories() []string {
	cats := s.acl
	if s.flags&flagWrite != 0 {
		cats |= aclWrite
	}
	if s.flags&flagReadonly != 0 {
		cats |= aclRead
	}
	if s.flags&flagAdmin != 0 {
		cats |= aclAdmin | aclDangerous
	}
	if s.flags&flagFast != 0 {
		cats |= aclFast
	} else {
		cats |= aclSlow
	}
	var out []string
	for i, n := range aclNames {
		if cats&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// flagList is the command's flags as COMMAND INFO names them.
func (s *commandSpec) flagList() []string {
	var out []string
	for i, n := range flagNames {
		if s.flags&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// commands maps a lower-case command name to its spec; commandNames is
// the table's names, sorted, for COMMAND and its kin. Each file that
// implements commands registers them from its init with registerCommands.
var (
	commands     = map[string]*commandSpec{}
	commandNames []string
)

// maxCommandName is the longest command name the table may hold.
const maxCommandName = 16

// commandIndex lists the specs by name length and first letter, so a
// lookup compares a few names instead of hashing: it is on the path of
// every request.
var commandIndex [maxCommandName + 1][26][]*commandSpec

// registerCommands adds specs to the table. It panics on a malformed or
// duplicate entry: the table is fixed at build time.
func registerCommands(specs ...*commandSpec) {
	for _, s := range specs {
		if len(s.name) == 0 || len(s.name) > maxCommandName || s.name != strings.ToLower(s.name) || s.name[0] < 'a' || s.name[0] > 'z' {
			panic("server: bad command name in the table: " + s.name)
		}
		if commands[s.name] != nil {
			panic("server: command registered twice: " + s.name)
		}
		if s.run == nil || s.arity == 0 || s.summary == "" || s.group == "" {
			panic("server: incomplete command spec: " + s.name)
		}
		if s.flags&(flagWrite|flagReadonly) == flagWrite|flagReadonly {
			panic("server: command both write and readonly: " + s.name)
		}
		commands[s.name] = s
		commandNames = append(commandNames, s.name)
		commandIndex[len(s.name)][s.name[0]-'a'] = append(commandIndex[len(s.name)][s.name[0]-'a'], s)
	}
	slices.Sort(commandNames)
}

// CommandNames lists the commands the server implements, upper case and
// sorted, for --help.
func CommandNames() []string {
	out := make([]string, len(commandNames))
	for i, n := range commandNames {
		out[i] = strings.ToUpper(n)
	}
	return out
}

// lookupCommand finds the spec of name, ignoring ASCII case, without
// allocating.
func lookupCommand(name []byte) *commandSpec {
	if len(name) == 0 || len(name) > maxCommandName {
		return nil
	}
	first := name[0] | 0x20 // lower case for letters
	if first < 'a' || first > 'z' {
		return nil
	}
	for _, spec := range commandIndex[len(name)][first-'a'] {
		if equalFoldASCII(name, spec.name) {
			return spec
		}
	}
	return nil
}

// equalFoldASCII reports whether b equals the lower-case name lower,
// ignoring the case of ASCII letters in b.
func equalFoldASCII(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
