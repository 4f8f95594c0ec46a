package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/report/reporttest"
	"github.com/tierbench/tierbench/results"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// TestHTMLInChromium opens a rendered bundle's report.html from file:// in
// headless Chromium whose every fetch goes to a recording proxy: the
// screenshot is a PNG, the page's text holds every shown cell's median as
// the table prints it, the chart and the plan are in it, and the browser
// asked the network for nothing. A control page with one remote image
// shows the proxy sees what a page asks for. TIERBENCH_HTML_BUNDLE names
// a real bundle to check instead of the reference's built one.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir, res := renderedBundle(t)
	if real := os.Getenv("TIERBENCH_HTML_BUNDLE"); real != "" {
		dir, res = real, results.Results{}
		if err := results.ReadJSON(dir, results.FileResults, &res); err != nil {
			t.Fatal(err)
		}
		t.Logf("checking %s", dir)
	}
	got := reporttest.Browse(t, filepath.Join(dir, FileHTML))
	if len(got.Screenshot) < 1000 || !bytes.HasPrefix(got.Screenshot, pngMagic) {
		t.Errorf("got a screenshot of %d bytes, want a PNG", len(got.Screenshot))
	}
	if len(got.Requests) > 0 {
		t.Errorf("got requests %q, want the page to ask the network for nothing", got.Requests)
	}
	t.Logf("screenshot: %d bytes of PNG; DOM: %d bytes; requests through the proxy: %d", len(got.Screenshot), len(got.DOM), len(got.Requests))
	shown := 0
	for _, c := range res.Cells {
		if c.Passes == 0 || c.Excluded != "" {
			continue
		}
		shown++
		t.Logf("%s %s t=%d: median %s in the page's table", c.Row.Backend, c.Row.Label, c.Threads, human.Ops(c.Median))
		if want := human.Ops(c.Median); !regexp.MustCompile(`<td[^>]*>` + regexp.QuoteMeta(want)).MatchString(got.DOM) {
			t.Errorf("%s %s t=%d: the page's table lacks its median %s", c.Row.Backend, c.Row.Label, c.Threads, want)
		}
	}
	if shown == 0 {
		t.Fatal("the bundle shows no cell")
	}
	for _, want := range []string{"<h1>tierbench run " + res.Plan.RunID, `src="data:image/svg+xml;base64,`, "Integrity", results.FileSums, `"run_id": "` + res.Plan.RunID + `"`, "/proc/&lt;pid&gt;/status"} {
		if !strings.Contains(got.DOM, want) {
			t.Errorf("the page's DOM lacks %q", want)
		}
	}

	control := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><p>control</p><img src="http://tierbench-control.invalid/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl := reporttest.Browse(t, control)
	if !slices.ContainsFunc(ctl.Requests, func(r string) bool { return strings.Contains(r, "tierbench-control.invalid") }) {
		t.Errorf("control: got requests %q, want the remote image's among them", ctl.Requests)
	}
}

// TestHTMLPage checks the page without a browser: self-contained, raw
// HTML in the Markdown shown as text, a chart outside the bundle not read.
func TestHTMLPage(t *testing.T) {
	page, err := HTMLPage("t", []HTMLPart{{Markdown: "# Head\n\nread /proc/<pid>/io <script>alert(1)</script>\n\n![chart](a.svg)\n\n![away](../x.svg)\n\n| a | b |\n|--|--|\n| 1 | 2 |\n"}},
		func(name string) ([]byte, bool) { return []byte("<svg/>"), name == "a.svg" })
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{"/proc/&lt;pid&gt;/io", "&lt;script&gt;", `src="data:image/svg+xml;base64,PHN2Zy8+"`, "chart ../x.svg not in the bundle", "<td>1</td>", "default-src 'none'"} {
		if !strings.Contains(s, want) {
			t.Errorf("got page without %q:\n%s", want, s)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		if strings.Contains(strings.ReplaceAll(s, "http://www.w3.org", ""), bad) {
			t.Errorf("got page with %q: want nothing that fetches", bad)
		}
	}
}
