package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// hostPreflightParagraph describes a host of a run across hosts from its
// preflight.json in the bundle (nil when there is none).
func hostPreflightParagraph(raw []byte) string {
	var rep hostcheck.Report
	if raw == nil || json.Unmarshal(raw, &rep) != nil {
		return "No preflight of this host in the bundle."
	}
	return hostcheck.HostParagraph(rep)
}

// hostsMarkdown is the report's description of every host, for the Host
// section.
func hostsMarkdown(res results.Results) string {
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
			fmt.Fprintf(&b, " Link to the server: PING round trip p50 %.0f µs, p99 %.0f µs; pipelined PING %s ops/s (%d connections × %d).", n.RTTp50us, n.RTTp99us, human.Ops(n.NoopOps), n.NoopThread, n.NoopBatch)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}
