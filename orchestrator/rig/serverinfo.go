package rig

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// serverInfo reads INFO server, memory and persistence and the CONFIG
// values a reader needs to judge the numbers; a server that refuses a
// command just leaves its fields empty.
func (c *respConn) serverInfo() (results.ServerInfo, error) {
	var si results.ServerInfo
	srv, err := c.info("server")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	for _, k := range versionKeys {
		if v, ok := srv[k.key]; ok {
			si.Name, si.Version = k.name, v
			break
		}
	}
	if si.Name == "" {
		si.Name = "unknown (no *_version in INFO server)"
	}
	si.ProcessID = srv["process_id"]
	mem, err := c.info("memory")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	si.MaxMemory, si.MaxMemoryPolicy, si.UsedMemory = mem["maxmemory"], mem["maxmemory_policy"], mem["used_memory"]
	si.IOThreads = srv["io_threads_active"]
	if v, ok := c.configGet("io-threads"); ok {
		si.IOThreads = v
	}
	pers, err := c.info("persistence")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	si.Persistence = persistence(pers, c)
	return si, nil
}

// persistence summarises whether the server writes its data: RDB
// snapshots (CONFIG GET save) and the append-only file.
func persistence(info map[string]string, c *respConn) string {
	var parts []string
	if v, ok := c.configGet("save"); ok {
		if v == "" {
			parts = append(parts, "no RDB snapshots (save \"\")")
		} else {
			parts = append(parts, fmt.Sprintf("RDB snapshots (save %q)", v))
		}
	}
	switch info["aof_enabled"] {
	case "1":
		parts = append(parts, "append-only file on")
	case "0":
		parts = append(parts, "append-only file off")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ")
}

// configGet returns one CONFIG GET value; ok is false when the server
// refuses the command or does not know the parameter.
func (c *respConn) configGet(name string) (string, bool) {
	v, err := c.Do("CONFIG", "GET", name)
	if err != nil {
		return "", false
	}
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		return "", false
	}
	s, ok := arr[1].(string)
	return s, ok
}

func isRESPError(err error) bool {
	var e errRESP
	return errors.As(err, &e)
}

// versionKeys are the INFO server fields that name a server, most
// specific first: servers that speak RESP often also report a
// redis_version for clients that check it.
var versionKeys = []struct{ key, name string }{
	{"tierbench_version", "tierbench"}, {"garnet_version", "garnet"}, {"dragonfly_version", "dragonfly"},
	{"valkey_version", "valkey"}, {"keydb_version", "keydb"}, {"redis_version", "redis"},
}
