package orchestrator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
)

// linkBoundShare: a client that reached this share of its link's
// pipelined no-op rate may have been held back by the link, not the
// server: the report says so beside the table.
const linkBoundShare = 0.9

// HostSummary is one host of a run across hosts, in results.json.
type HostSummary struct {
	Name      string        `json:"name"`
	Endpoint  string        `json:"endpoint"`
	Roles     []string      `json:"roles"` // server, client
	Paragraph string        `json:"paragraph"`
	Network   *NetworkCheck `json:"network,omitempty"`
}

// readHosts describes the hosts of a run from hosts/<name>/ and judges
// each client link against the rates its clients reached; nil for a run
// on one machine.
func readHosts(dir string, plan Plan, passes []PassRecord) ([]HostSummary, []string) {
	hp := plan.Hosts
	if hp == nil {
		return nil, nil
	}
	var hosts []HostSummary
	index := map[string]int{}
	add := func(ep Endpoint, role string) {
		if i, ok := index[ep.Name]; ok {
			hosts[i].Roles = append(hosts[i].Roles, role)
			return
		}
		index[ep.Name] = len(hosts)
		hosts = append(hosts, HostSummary{Name: ep.Name, Endpoint: ep.display(), Roles: []string{role}})
	}
	add(hp.Server, "server")
	for _, c := range hp.Clients {
		add(c, "client")
	}
	for i := range hosts {
		h := &hosts[i]
		raw, err := os.ReadFile(filepath.Join(dir, dirHosts, h.Name, filePreflight))
		var rep hostcheck.Report
		if err != nil || json.Unmarshal(raw, &rep) != nil {
			h.Paragraph = "No preflight of this host in the bundle."
		} else {
			h.Paragraph = hostcheck.HostParagraph(rep)
		}
		var nc NetworkCheck
		if readJSON(filepath.Join(dir, dirHosts, h.Name), fileNetwork, &nc) == nil {
			h.Network = &nc
		}
	}
	return hosts, linkWarnings(hosts, passes)
}

// linkWarnings names every cell in which a client reached linkBoundShare
// of its host's pipelined no-op rate.
func linkWarnings(hosts []HostSummary, passes []PassRecord) []string {
	var out []string
	for _, h := range hosts {
		if h.Network == nil || h.Network.NoopOps <= 0 {
			continue
		}
		worst, at := 0.0, ""
		for _, p := range passes {
			for _, c := range p.Clients {
				if c.Host == h.Name && c.OpsPerSec/h.Network.NoopOps > worst {
					worst, at = c.OpsPerSec/h.Network.NoopOps, fmt.Sprintf("%s %s t=%d pass %d", titleCase(p.Row.Backend), p.Row.Label, p.Threads, p.Pass)
				}
			}
		}
		if worst >= linkBoundShare {
			out = append(out, fmt.Sprintf("host %s: its clients reached %.0f %% of the link's pipelined no-op rate (%s ops/s) in %s: the link, not the server, may have set that cell", h.Name, 100*worst, FormatOps(h.Network.NoopOps), at))
		}
	}
	return out
}

// hostsMarkdown is the report's description of every host, for the Host
// section.
func hostsMarkdown(res Results) string {
	if len(res.Hosts) == 0 {
		return ""
	}
	var b strings.Builder
	hp := res.Plan.Hosts
	auth := "no password (loopback)"
	if hp.Auth {
		auth = "a password made for the run"
	}
	fmt.Fprintf(&b, "Across %d hosts, driven through their Docker engines; the server listened on %s:%d with %s.\n\n", len(res.Hosts), hp.Bind, hp.Port, auth)
	for _, h := range res.Hosts {
		fmt.Fprintf(&b, "- **%s** (%s, %s): %s", h.Name, strings.Join(h.Roles, " and "), h.Endpoint, h.Paragraph)
		if n := h.Network; n != nil {
			fmt.Fprintf(&b, " Link to the server: PING round trip p50 %.0f µs, p99 %.0f µs; pipelined PING %s ops/s (%d connections × %d).", n.RTTp50us, n.RTTp99us, FormatOps(n.NoopOps), n.NoopThread, n.NoopBatch)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// linkWarningsMarkdown repeats the link warnings beside the table.
func linkWarningsMarkdown(res Results) string {
	if len(res.LinkWarnings) == 0 {
		return ""
	}
	return "**Network:** " + strings.Join(res.LinkWarnings, "; ") + ".\n\n"
}
