package plan

import (
	"strings"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// Systems are the run's servers: --server's in order, then --server-cmd's;
// tierbench's own alone when neither is given.
func (c Config) Systems() ([]sut.Server, error) {
	var out []sut.Server
	if len(c.Servers) > 0 {
		s, err := sut.LookupList(strings.Join(c.Servers, ","))
		if err != nil {
			return nil, err
		}
		out = s
	}
	if c.ServerCmd != "" {
		s, err := sut.Custom(c.ServerCmd)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		own, _ := sut.Lookup(results.OwnServer)
		out = []sut.Server{own}
	}
	return out, nil
}

// NamesServers says whether the run names its servers (--server or
// --server-cmd), so its rows carry the server's name.
func (c Config) NamesServers() bool { return len(c.Servers) > 0 || c.ServerCmd != "" }

// ForeignServers says whether the run starts a server besides tierbench's
// own.
func (c Config) ForeignServers() bool {
	servers, err := c.Systems()
	return err == nil && len(Foreign(servers)) > 0
}

// Foreign are the run's servers other than tierbench's own.
func Foreign(servers []sut.Server) []sut.Server {
	var out []sut.Server
	for _, s := range servers {
		if !s.Self {
			out = append(out, s)
		}
	}
	return out
}
