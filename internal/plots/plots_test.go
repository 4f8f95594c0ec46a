package plots

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

func throughputChart() Chart {
	return Chart{
		Title: "GET throughput against client connections", XLabel: "client connections (threads)", YLabel: "GET ops/sec",
		XTicksAtPoints: true,
		Series: []Series{
			{Name: "Libaio no pin", Points: []Point{{8, 158_000}, {32, 159_000}, {48, 150_000}, {64, 149_000}}},
			{Name: "Uring no pin", Points: []Point{{8, 175_000}, {32, 168_000}, {48, 160_000}, {64, 155_000}}, Dashed: true},
		},
		Levels: []Level{{Name: "fio 512 B ceiling (151 K IOPS)", Y: 151_000}},
	}
}

func latencyChart() Chart {
	return Chart{
		Title: "GET latency against achieved throughput", XLabel: "achieved GET ops/sec", YLabel: "latency from intended send time",
		LogY: true, YFormat: FormatMicros,
		Series: []Series{
			{Name: "p50", Points: []Point{{15_000, 90}, {37_000, 110}, {75_000, 160}, {112_000, 420}, {135_000, 2_900}}},
			{Name: "p99", Points: []Point{{15_000, 300}, {37_000, 420}, {75_000, 900}, {112_000, 4_100}, {135_000, 31_000}}},
			{Name: "p99.9", Points: []Point{{15_000, 900}, {37_000, 1_300}, {75_000, 3_100}, {112_000, 9_000}, {135_000, 52_000}}},
		},
	}
}

// TestChartsParseAndRender draws each kind of chart, parses it as XML,
// renders it with rsvg-convert and checks the picture is neither blank
// nor a solid block, and that every label a reader needs is in it.
func TestChartsParseAndRender(t *testing.T) {
	tests := []struct {
		name      string
		chart     Chart
		wantTexts []string
	}{
		{"throughput", throughputChart(), []string{"GET throughput against client connections", "client connections (threads)", "GET ops/sec",
			"Libaio no pin", "Uring no pin", "fio 512 B ceiling (151 K IOPS)", "8", "32", "48", "64", "150 K"}},
		{"latency", latencyChart(), []string{"GET latency against achieved throughput", "achieved GET ops/sec", "latency from intended send time",
			"p50", "p99", "p99.9", "1 ms", "10 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := tt.chart.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckXML(svg); err != nil {
				t.Fatal(err)
			}
			texts, elements, err := Structure(svg)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantTexts {
				if !slices.Contains(texts, want) {
					t.Errorf("got texts %q, want %q among them", texts, want)
				}
			}
			if elements["path"] < len(tt.chart.Series) {
				t.Errorf("got %d paths, want at least one per series (%d)", elements["path"], len(tt.chart.Series))
			}
			if !strings.Contains(string(svg), fontFamilies) {
				t.Errorf("got no %q in the SVG, want every text to name the metric-compatible fallbacks", fontFamilies)
			}
			path := filepath.Join(t.TempDir(), tt.name+".svg")
			if err := os.WriteFile(path, svg, 0o644); err != nil {
				t.Fatal(err)
			}
			img := testenv.MustRenderSVG(t, path)
			if got, want := img.Bounds().Dx(), 768; got != want {
				t.Errorf("got a %d px wide rendering, want %d (8 in at 96 dpi)", got, want)
			}
			if share := testenv.InkShare(img); share < 0.02 || share > 0.5 {
				t.Errorf("got %.3f of the pixels inked, want between 0.02 (not blank) and 0.5 (not a solid block)", share)
			}
		})
	}
}

func TestEmptyChartIsAnError(t *testing.T) {
	for _, c := range []Chart{
		{Title: "nothing"},
		{Title: "no points", Series: []Series{{Name: "x"}}},
		{Title: "only non-positive on a log axis", LogY: true, Series: []Series{{Name: "x", Points: []Point{{1, 0}}}}},
	} {
		if _, err := c.SVG(); !errors.Is(err, ErrEmpty) {
			t.Errorf("%s: got %v, want ErrEmpty", c.Title, err)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, err := throughputChart().SVG()
	if err != nil {
		t.Fatal(err)
	}
	b, err := throughputChart().SVG()
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("got two different SVGs of the same chart, want identical bytes")
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		f    func(float64) string
		v    float64
		want string
	}{
		{FormatQuantity, 0, "0"},
		{FormatQuantity, 64, "64"},
		{FormatQuantity, 150_000, "150 K"},
		{FormatQuantity, 1_250_000, "1.25 M"},
		{FormatMicros, 850, "850 µs"},
		{FormatMicros, 1_200, "1.2 ms"},
		{FormatMicros, 3_000_000, "3 s"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.v); got != tt.want {
			t.Errorf("format(%g): got %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestCheckXMLRefuses(t *testing.T) {
	for _, bad := range []string{"", "<svg><g></svg>", "<html></html>", "not xml"} {
		if err := CheckXML([]byte(bad)); err == nil {
			t.Errorf("CheckXML(%q): got nil, want an error", bad)
		}
	}
}
