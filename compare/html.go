package compare

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/tierbench/tierbench/report"
)

// HTML is the comparison as one self-contained page (report.HTMLPage):
// the Markdown's tables, notes, gate and differences, then one chart per
// row drawn inline.
func (c *Comparison) HTML() ([]byte, error) {
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	charts := map[string][]byte{}
	var plotsMD strings.Builder
	for _, ch := range c.Charts() {
		svg, err := ch.Chart.SVG()
		if err != nil {
			return nil, fmt.Errorf("compare: plot %s: %w", ch.File, err)
		}
		charts[ch.File] = svg
		fmt.Fprintf(&plotsMD, "![%s](%s)\n\n", ch.Caption, ch.File)
	}
	parts := []report.HTMLPart{{Markdown: md.String()}}
	if plotsMD.Len() > 0 {
		parts = append(parts, report.HTMLPart{Heading: "Plots", Markdown: plotsMD.String()})
	}
	return report.HTMLPage("tierbench compare", parts, func(name string) ([]byte, bool) {
		b, ok := charts[name]
		return b, ok
	})
}

// WriteHTMLFile writes HTML to path.
func (c *Comparison) WriteHTMLFile(path string) error {
	page, err := c.HTML()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, page, 0o644); err != nil {
		return fmt.Errorf("compare: write %s: %w", path, err)
	}
	return nil
}
