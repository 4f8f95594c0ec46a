package testenv

import (
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MustRenderSVG renders an SVG file to PNG with rsvg-convert (Debian's
// librsvg2-bin, a renderer independent of the library that drew it) next
// to the test's temp files, and returns the decoded image.
func MustRenderSVG(t testing.TB, svgPath string) image.Image {
	t.Helper()
	bin := MustLookPath(t, "rsvg-convert")
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(svgPath), ".svg")+".png")
	if b, err := exec.Command(bin, "--background-color", "white", "-o", out, svgPath).CombinedOutput(); err != nil {
		t.Fatalf("testenv: rsvg-convert %s: %v: %s", svgPath, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("testenv: decode the PNG rsvg-convert made of %s: %v", svgPath, err)
	}
	return img
}

// InkShare is the share of img's pixels that differ from its top-left
// pixel (the background) by more than a faint anti-aliasing step: 0 for
// a blank picture.
func InkShare(img image.Image) float64 {
	b := img.Bounds()
	if b.Empty() {
		return 0
	}
	br, bg, bb, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	const step = 0x1000 // of 0xffff per channel
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r, br) > step || diff(g, bg) > step || diff(bl, bb) > step {
				ink++
			}
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy())
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// MustMatchGolden compares got with the golden file at path, or, when
// update is set (the test binary's -update flag), rewrites the file.
func MustMatchGolden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("testenv: read golden file (go test -update writes it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("got output different from %s (go test -update refreshes it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
