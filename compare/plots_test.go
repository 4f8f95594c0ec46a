package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/internal/testenv"
)

// svgStructure is what the golden file keeps of an SVG: its texts and
// element counts, which change with what is drawn, not with font metrics.
type svgStructure struct {
	File     string         `json:"file"`
	Texts    []string       `json:"texts"`
	Elements map[string]int `json:"elements"`
}

// TestPlots draws the comparison's charts, checks their structure against
// the golden file, and renders each with rsvg-convert.
func TestPlots(t *testing.T) {
	c := mustCompare(t, Options{}, base, baseAgain, batch4)
	dir := t.TempDir()
	md, err := c.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	charts := c.Charts()
	if got, want := len(charts), 2; got != want {
		t.Fatalf("got %d charts, want %d (one per row)", got, want)
	}
	var got []svgStructure
	for _, ch := range charts {
		path := filepath.Join(dir, ch.File)
		if !strings.Contains(md, "]("+filepath.ToSlash(path)+")") {
			t.Errorf("got Markdown %q, want it to embed %s", md, path)
		}
		svg, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := plots.CheckXML(svg); err != nil {
			t.Fatalf("%s: %v", ch.File, err)
		}
		texts, elements, err := plots.Structure(svg)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range c.Bundles {
			if !slices.Contains(texts, b.Name) {
				t.Errorf("%s: got texts %q, want a legend line for bundle %s", ch.File, texts, b.Name)
			}
		}
		got = append(got, svgStructure{File: ch.File, Texts: texts, Elements: elements})
		if share := testenv.InkShare(testenv.MustRenderSVG(t, path)); share < 0.02 || share > 0.5 {
			t.Errorf("%s: got %.3f of the pixels inked, want between 0.02 and 0.5", ch.File, share)
		}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "golden", "plots.json"), append(b, '\n'))
}
