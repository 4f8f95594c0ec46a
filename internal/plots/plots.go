// Package plots draws the charts of a results bundle — throughput against
// threads, latency percentiles against throughput — as SVG, with
// gonum.org/v1/plot and its SVG backend (vg/vgsvg).
//
// A Chart is plain data (series of points, horizontal reference lines
// such as the fio ceiling), so the orchestrator and `tierbench compare`
// build charts without knowing the library. Every chart has a title, both
// axes labelled with their unit, and a legend in a strip below the axes
// (so it never covers a line); the axes take 8 × 4.5 in (768 × 432 px at
// 96 dpi), which GitHub shows unscaled in a README or report.md. Fonts are referred to by name (Liberation Sans, then the
// metric-compatible Arial and Helvetica), not embedded, so a chart is a
// few KB.
//
// Invariants: the output is deterministic for the same Chart (no
// timestamps, series in the order given); a Chart with no points is an
// error, never an empty picture.
package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Size of every chart without its legend strip.
const (
	Width  = 8 * vg.Inch
	Height = 4.5 * vg.Inch
)

// ErrEmpty is returned for a chart with nothing to draw.
var ErrEmpty = errors.New("plots: chart has no points")

// Point is one measured point.
type Point struct{ X, Y float64 }

// Series is one line of a chart, drawn with point marks.
type Series struct {
	Name   string
	Points []Point
	// Dashed draws the line dashed (the same row of another bundle, or
	// a second percentile), keeping colours for the distinction a reader
	// needs most.
	Dashed bool
}

// Level is a horizontal reference line across the whole chart, such as
// the fio ceiling.
type Level struct {
	Name string
	Y    float64
}

// Chart is one figure.
type Chart struct {
	Title  string
	XLabel string // with its unit, e.g. "client connections (threads)"
	YLabel string // with its unit, e.g. "GET ops/sec"
	Series []Series
	Levels []Level
	// LogY draws the Y axis on a log scale (latencies spanning decades).
	LogY bool
	// XTicksAtPoints labels the X axis exactly at the points' X values
	// (thread counts) instead of round numbers.
	XTicksAtPoints bool
	// YFormat and XFormat write a tick value; default: FormatQuantity.
	YFormat, XFormat func(float64) string
}

// sans is the typeface of every text of a chart.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// SVG draws the chart as an SVG document.
func (c Chart) SVG() ([]byte, error) {
	p, entries, err := c.plot()
	if err != nil {
		return nil, err
	}
	columns, stripHeight := legendColumns(p.Legend.TextStyle, entries)
	canvas := vgsvg.New(Width, Height+stripHeight)
	dc := draw.New(canvas)
	p.Draw(draw.Crop(dc, 0, 0, stripHeight, 0))
	x := legendMargin
	for _, col := range columns {
		area := draw.Canvas{Canvas: canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: 0}, Max: vg.Point{X: x + col.width, Y: stripHeight - legendGap}}}
		col.legend.Draw(area)
		x += col.width + legendMargin
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: write SVG of %q: %w", c.Title, err)
	}
	// The layout was measured with Liberation Sans; Arial and Helvetica
	// have the same metrics, so a viewer without Liberation still fits
	// every label where it was placed.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(fontFamilies)), nil
}

const fontFamilies = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// legendEntry is one line of the legend: its text and its thumbnails.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

func (c Chart) plot() (*plot.Plot, []legendEntry, error) {
	var entries []legendEntry
	var xs, ys []float64
	// A log axis is drawn as log10 of the values on a linear axis whose
	// ticks are labelled with the powers of ten: gonum's LogScale pads the
	// data area for an axis label it centres at the arithmetic midpoint.
	y := func(v float64) float64 { return v }
	if c.LogY {
		y = math.Log10
	}
	for _, s := range c.Series {
		for _, pt := range s.Points {
			if c.LogY && pt.Y <= 0 {
				continue
			}
			xs = append(xs, pt.X)
			ys = append(ys, y(pt.Y))
		}
	}
	if len(xs) == 0 {
		return nil, nil, fmt.Errorf("%w: %q", ErrEmpty, c.Title)
	}
	for _, l := range c.Levels {
		if !c.LogY || l.Y > 0 {
			ys = append(ys, y(l.Y))
		}
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	for _, st := range []*draw.TextStyle{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Typeface, st.Font.Variant = sans.Typeface, sans.Variant
	}
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Tick.Label.Font.Size = vg.Points(11)
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	p.Add(plotter.NewGrid())

	xlo, xhi := span(xs)
	ylo, yhi := span(ys)
	pad := (xhi - xlo) * 0.04
	if pad == 0 {
		pad = math.Max(math.Abs(xhi)*0.1, 1)
	}
	p.X.Min, p.X.Max = xlo-pad, xhi+pad
	if c.LogY {
		// Whole decades: the end ticks are labelled powers of ten.
		p.Y.Min, p.Y.Max = math.Floor(ylo), math.Ceil(yhi)
		if p.Y.Max == p.Y.Min {
			p.Y.Max++
		}
	} else {
		p.Y.Min, p.Y.Max = 0, yhi*1.08
	}
	xf, yf := orDefault(c.XFormat), orDefault(c.YFormat)
	if c.XTicksAtPoints {
		p.X.Tick.Marker = atPoints(xs, xf)
	} else {
		p.X.Tick.Marker = linearTicks(xf)
	}
	if c.LogY {
		p.Y.Tick.Marker = logTicks(yf)
	} else {
		p.Y.Tick.Marker = linearTicks(yf)
	}

	for i, s := range c.Series {
		pts := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			if c.LogY && pt.Y <= 0 {
				continue
			}
			pts = append(pts, plotter.XY{X: pt.X, Y: y(pt.Y)})
		}
		if len(pts) == 0 {
			continue
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, nil, fmt.Errorf("plots: series %q of %q: %w", s.Name, c.Title, err)
		}
		col := plotutil.Color(i)
		line.Color, marks.Color = col, col
		line.Width = vg.Points(2)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		marks.Shape = plotutil.Shape(i)
		marks.Radius = vg.Points(3)
		p.Add(line, marks)
		entries = append(entries, legendEntry{s.Name, []plot.Thumbnailer{line, marks}})
	}
	for i, l := range c.Levels {
		if c.LogY && l.Y <= 0 {
			continue
		}
		ly := y(l.Y)
		lvl := plotter.NewFunction(func(float64) float64 { return ly })
		lvl.Color = plotutil.DarkColors[(i+len(c.Series))%len(plotutil.DarkColors)]
		lvl.Width = vg.Points(1.5)
		lvl.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(lvl)
		entries = append(entries, legendEntry{l.Name, []plot.Thumbnailer{lvl}})
	}
	return p, entries, nil
}

// Legend layout: the legend is a strip below the chart, in as few rows
// as fit the width, so it never covers a line.
const (
	legendMargin  = vg.Length(18) // left of and between columns
	legendGap     = vg.Length(6)  // between the X axis label and the strip
	legendPadding = vg.Length(3)  // between entries
	legendThumb   = vg.Length(28)
)

type legendColumn struct {
	legend plot.Legend
	width  vg.Length
}

// legendColumns splits the entries column by column into the fewest
// rows whose columns fit the chart's width, and returns the strip's
// height.
func legendColumns(sty draw.TextStyle, entries []legendEntry) ([]legendColumn, vg.Length) {
	if len(entries) == 0 {
		return nil, 0
	}
	var cols []legendColumn
	for rows := 1; rows <= len(entries); rows++ {
		cols = cols[:0]
		total := legendMargin
		for i := 0; i < len(entries); i += rows {
			l := plot.NewLegend()
			l.TextStyle = sty
			l.Top, l.Left = true, true
			l.ThumbnailWidth, l.Padding = legendThumb, legendPadding
			var w vg.Length
			for _, e := range entries[i:min(i+rows, len(entries))] {
				l.Add(e.text, e.thumbs...)
				w = max(w, legendThumb+sty.Rectangle(" "+e.text).Max.X)
			}
			cols = append(cols, legendColumn{legend: l, width: w})
			total += w + legendMargin
		}
		if total <= Width {
			break
		}
	}
	rows := vg.Length(cols[0].legend.Rectangle(draw.Canvas{}).Size().Y)
	return cols, rows + legendGap + legendPadding*2
}

func span(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func orDefault(f func(float64) string) func(float64) string {
	if f == nil {
		return FormatQuantity
	}
	return f
}

// logTicks labels a log10 axis at the powers of ten, and at 2× and 5×
// them when it spans fewer than two decades, with unlabelled ticks at the
// other multiples.
func logTicks(f func(float64) string) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		labelled := map[float64]bool{1: true}
		if hi-lo < 2 {
			labelled[2], labelled[5] = true, true
		}
		var ticks []plot.Tick
		for d := math.Floor(lo); d <= hi; d++ {
			for m := 1.0; m <= 9; m++ {
				v := d + math.Log10(m)
				if v < lo || v > hi {
					continue
				}
				t := plot.Tick{Value: v}
				if labelled[m] {
					t.Label = f(m * math.Pow(10, d))
				}
				ticks = append(ticks, t)
			}
		}
		return ticks
	})
}

// linearTicks labels about six round values (steps of 1, 2, 2.5 or 5
// times a power of ten) across the range, with an unlabelled tick between
// each two.
func linearTicks(f func(float64) string) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		if !(hi > lo) {
			return []plot.Tick{{Value: lo, Label: f(lo)}}
		}
		raw := (hi - lo) / 6
		mag := math.Pow(10, math.Floor(math.Log10(raw)))
		step := mag * 10
		for _, m := range []float64{1, 2, 2.5, 5} {
			if m*mag >= raw {
				step = m * mag
				break
			}
		}
		var ticks []plot.Tick
		for i := math.Ceil(lo / step); i*step <= hi; i++ {
			v := i * step
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: f(v)})
			if mid := v + step/2; mid <= hi {
				ticks = append(ticks, plot.Tick{Value: mid})
			}
		}
		return ticks
	})
}

// atPoints labels exactly the given X values.
func atPoints(xs []float64, f func(float64) string) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ticks []plot.Tick
		seen := map[float64]bool{}
		for _, x := range xs {
			if !seen[x] && x >= lo && x <= hi {
				seen[x] = true
				ticks = append(ticks, plot.Tick{Value: x, Label: f(x)})
			}
		}
		return ticks
	})
}

// FormatQuantity writes an axis value the way the tables do: "150 K",
// "1.5 M", "64".
func FormatQuantity(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trim(v/1e6) + " M"
	case a >= 1e3:
		return trim(v/1e3) + " K"
	}
	return trim(v)
}

func trim(v float64) string { return fmt.Sprintf("%.4g", v) }

// FormatMicros writes a latency given in microseconds: "850 µs", "1.2 ms",
// "3 s".
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return trim(us/1e6) + " s"
	case us >= 1e3:
		return trim(us/1e3) + " ms"
	}
	return trim(us) + " µs"
}

// CheckXML reports whether svg is a well-formed XML document with an
// <svg> root, reading every token.
func CheckXML(svg []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("plots: SVG is not well-formed XML: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		return fmt.Errorf("plots: SVG root element is %q, want svg", root)
	}
	return nil
}

// Structure summarises an SVG for golden tests that must not break on a
// font metric: its texts in document order and how many of each element.
func Structure(svg []byte) (texts []string, elements map[string]int, err error) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	elements = map[string]int{}
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts, elements, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("plots: SVG is not well-formed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements[t.Name.Local]++
			if t.Name.Local == "text" {
				inText = true
				texts = append(texts, "")
			}
		case xml.EndElement:
			if t.Name.Local == "text" {
				inText = false
			}
		case xml.CharData:
			if inText {
				texts[len(texts)-1] += string(t)
			}
		}
	}
}
