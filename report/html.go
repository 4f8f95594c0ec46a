package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// FileHTML is the bundle's report as one self-contained page.
const FileHTML = "report.html"

// HTMLPart is one section of a page: Markdown (report.md's, ladder.md's,
// compare's) or preformatted text (a JSON document), under a heading.
type HTMLPart struct {
	Heading  string
	Markdown string
	Pre      string
	// Folded puts the part in a <details> a reader opens.
	Folded bool
}

// HTMLPage builds one HTML document that needs nothing but itself: its
// style is inline, its charts are data: URIs (an SVG as an image runs no
// script and loads nothing), it links no script, style sheet or font, and
// its Content-Security-Policy forbids every fetch but data: images, so a
// browser opening it from file:// offline shows all of it and asks the
// network for nothing. Raw HTML in the Markdown is shown as text, never
// interpreted. svg returns the bytes of a chart the Markdown names
// (![caption](file.svg)); a chart it cannot give shows as its caption.
func HTMLPage(title string, parts []HTMLPart, svg func(name string) ([]byte, bool)) ([]byte, error) {
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(pageRenderer{svg: svg}, 100))),
	)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head>
<body>
`, html.EscapeString(title), pageStyle)
	for _, p := range parts {
		var body bytes.Buffer
		switch {
		case p.Markdown != "":
			if err := md.Convert([]byte(p.Markdown), &body); err != nil {
				return nil, fmt.Errorf("report: %s as HTML: %w", p.Heading, err)
			}
		default:
			fmt.Fprintf(&body, "<pre>%s</pre>\n", html.EscapeString(p.Pre))
		}
		switch {
		case p.Folded:
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n%s</details>\n", html.EscapeString(p.Heading), body.Bytes())
		case p.Heading != "":
			fmt.Fprintf(&b, "<section>\n<h2>%s</h2>\n%s</section>\n", html.EscapeString(p.Heading), body.Bytes())
		default:
			fmt.Fprintf(&b, "<section>\n%s</section>\n", body.Bytes())
		}
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes(), nil
}

const pageStyle = `
body{font-family:system-ui,sans-serif;max-width:78rem;margin:1rem auto;padding:0 1rem;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:.6rem 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.2rem .5rem}
th{background:#f2f2f2}
tr:nth-child(even) td{background:#fafafa}
code,pre{font-family:ui-monospace,monospace;font-size:.9em}
pre{background:#f6f6f6;padding:.6rem;overflow:auto}
figure{margin:1rem 0}
figure img{max-width:100%;height:auto}
figcaption{font-size:.9em;color:#555}
details{margin:1rem 0}
summary{font-weight:bold;cursor:pointer}
.verified{border-left:.4rem solid #2a8;padding:.2rem .8rem}
.unverified{border-left:.4rem solid #c33;padding:.2rem .8rem}
`

// pageRenderer draws what the page does differently from goldmark's
// HTML: charts inline, raw HTML as text.
type pageRenderer struct {
	svg func(name string) ([]byte, bool)
}

func (r pageRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, r.image)
	reg.Register(ast.KindRawHTML, r.rawInline)
	reg.Register(ast.KindHTMLBlock, r.rawBlock)
}

// image writes a chart as a figure with a data: URI, its caption the
// alt text; a chart not in the bundle, or not an SVG, as its caption.
func (r pageRenderer) image(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	img := n.(*ast.Image)
	caption := html.EscapeString(altText(img, source))
	name := string(img.Destination)
	if data, ok := r.svg(name); ok && path.Ext(name) == ".svg" {
		fmt.Fprintf(w, `<figure><img alt="%s" src="data:image/svg+xml;base64,%s"><figcaption>%s</figcaption></figure>`,
			caption, base64.StdEncoding.EncodeToString(data), caption)
	} else {
		fmt.Fprintf(w, `<figure><figcaption>%s (chart %s not in the bundle)</figcaption></figure>`, caption, html.EscapeString(name))
	}
	return ast.WalkSkipChildren, nil
}

func altText(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(source))
		} else {
			b.WriteString(altText(c, source))
		}
	}
	return b.String()
}

// rawInline writes inline HTML ("/proc/<pid>/io") as the text it is.
func (r pageRenderer) rawInline(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

// rawBlock writes a block of HTML as the text it is.
func (r pageRenderer) rawBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		_, _ = w.WriteString("<p>")
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
		_, _ = w.WriteString("</p>\n")
	}
	return ast.WalkSkipChildren, nil
}
