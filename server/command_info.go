package server

import "strings"

// COMMAND and its subcommands, answered from the command table.

func cmdCommand(c *conn, args [][]byte) {
	if len(args) == 1 {
		c.appendCommandInfos(nil)
		return
	}
	switch strings.ToLower(string(args[1])) {
	case "count":
		if len(args) != 2 {
			c.wrongArity("command|count")
			return
		}
		c.out = appendInt(c.out, int64(len(commandNames)))
	case "list":
		c.out = appendArray(c.out, len(commandNames))
		for _, n := range commandNames {
			c.out = appendBulkString(c.out, n)
		}
	case "info":
		c.appendCommandInfos(args[2:])
	case "docs":
		var specs []*commandSpec
		if len(args) == 2 {
			for _, n := range commandNames {
				specs = append(specs, commands[n])
			}
		} else {
			for _, n := range args[2:] {
				if spec := lookupCommand(n); spec != nil {
					specs = append(specs, spec)
				}
			}
		}
		// A map in RESP2 is a flat array of name, value pairs.
		c.out = appendArray(c.out, 2*len(specs))
		for _, spec := range specs {
			c.out = appendBulkString(c.out, spec.name)
			c.out = appendArray(c.out, 4)
			c.out = appendBulkString(c.out, "summary")
			c.out = appendBulkString(c.out, spec.summary)
			c.out = appendBulkString(c.out, "group")
			c.out = appendBulkString(c.out, spec.group)
		}
	default:
		c.errorReply("ERR unknown subcommand '" + string(truncate(args[1], 128)) + "'. Try COMMAND HELP.")
	}
}

// appendCommandInfos answers COMMAND INFO names (every command when names
// is empty): an unknown name gets a null in its place, as in Redis.
func (c *conn) appendCommandInfos(names [][]byte) {
	if len(names) == 0 {
		c.out = appendArray(c.out, len(commandNames))
		for _, n := range commandNames {
			c.appendCommandInfo(commands[n])
		}
		return
	}
	c.out = appendArray(c.out, len(names))
	for _, n := range names {
		if spec := lookupCommand(n); spec != nil {
			c.appendCommandInfo(spec)
		} else {
			c.out = appendNull(c.out)
		}
	}
}

// appendCommandInfo writes a COMMAND INFO entry: name, arity, flags, first
// key, last key, key step, ACL categories, then tips, key specs and
// subcommands, which tierbench does not describe (empty arrays).
func (c *conn) appendCommandInfo(spec *commandSpec) {
	c.out = appendArray(c.out, 10)
	c.out = appendBulkString(c.out, spec.name)
	c.out = appendInt(c.out, int64(spec.arity))
	flags := spec.flagList()
	c.out = appendArray(c.out, len(flags))
	for _, f := range flags {
		c.out = appendSimple(c.out, f)
	}
	c.out = appendInt(c.out, int64(spec.firstKey))
	c.out = appendInt(c.out, int64(spec.lastKey))
	c.out = appendInt(c.out, int64(spec.keyStep))
	cats := spec.categories()
	c.out = appendArray(c.out, len(cats))
	for _, cat := range cats {
		c.out = appendSimple(c.out, cat)
	}
	c.out = appendArray(c.out, 0)
	c.out = appendArray(c.out, 0)
	c.out = appendArray(c.out, 0)
}
