// Package reporttest opens the pages report writes in a real headless
// Chromium (Debian's package) for tests: a screenshot, the page's DOM,
// and every connection the browser tried to make. Only tests import it.
package reporttest

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Browsed is what Chromium made of a page.
type Browsed struct {
	DOM        string // --dump-dom: the document after load
	Screenshot []byte // PNG
	// Requests are the first lines of every request the browser sent
	// through its proxy ("GET http://host/x HTTP/1.1", "CONNECT host:443
	// HTTP/1.1") but those to its own services (browserServices): with
	// every fetch sent to a proxy that is a local listener recording them,
	// none means the page asked the network for nothing.
	Requests []string
}

// chromiumBinary is Debian's browser itself, not /usr/bin/chromium: the
// wrapper exports Google API keys that make the browser sign in and ask
// for updates on its own, which would drown the page's own requests.
var chromiumBinaries = []string{"/usr/lib/chromium/chromium", "chromium"}

// Browse opens the file at path (from file://) in headless Chromium with
// all its traffic sent to a recording proxy and its own background
// services off, and returns the page's DOM, a screenshot and the
// requests. The browser gets a profile of its own under t.TempDir.
func Browse(t *testing.T, path string) Browsed {
	t.Helper()
	bin := ""
	for _, b := range chromiumBinaries {
		if p, err := exec.LookPath(b); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatalf("reporttest: chromium not found (%s): run scripts/install-deps.sh", strings.Join(chromiumBinaries, ", "))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	proxy, requests := recordingProxy(t)
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--disable-extensions", "--disable-client-side-phishing-detection", "--disable-domain-reliability", "--no-pings",
		"--disable-breakpad", "--safebrowsing-disable-auto-update",
		"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,Translate,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
		"--proxy-server=http://"+proxy, "--proxy-bypass-list=<-loopback>",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,2400",
		"--screenshot="+shot, "--dump-dom", "file://"+abs)
	cmd.Env = withoutGoogleKeys(os.Environ())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reporttest: chromium on %s: %v\n%s", abs, err, stderr.String())
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("reporttest: chromium took no screenshot: %v\n%s", err, stderr.String())
	}
	return Browsed{DOM: string(out), Screenshot: png, Requests: requests()}
}

func withoutGoogleKeys(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "GOOGLE_") {
			out = append(out, e)
		}
	}
	return out
}

// browserServices are the hosts headless Chromium asks on its own, with
// its background networking off, whatever page it opens: its component
// updater and its account service. Requests to them are not the page's.
// A page's fonts or scripts from Google (fonts.googleapis.com,
// fonts.gstatic.com, ajax.googleapis.com) are not among them.
var browserServices = []string{"update.googleapis.com", "accounts.google.com", "clients2.google.com", "redirector.gvt1.com", "edgedl.me.gvt1.com"}

func browserService(requestLine string) bool {
	fields := strings.Fields(requestLine)
	if len(fields) < 2 {
		return false
	}
	target := fields[1] // "host:443" for CONNECT, "http://host/…" otherwise
	target = strings.TrimPrefix(target, "http://")
	host, _, _ := strings.Cut(target, "/")
	host, _, _ = strings.Cut(host, ":")
	for _, s := range browserServices {
		if host == s {
			return true
		}
	}
	return false
}

// recordingProxy listens on a loopback port and records the first line of
// every connection made to it, answering none; requests lists them so far.
func recordingProxy(t *testing.T) (addr string, requests func() []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			// A quick refusal: a proxy that hangs up makes the browser retry.
			_, _ = c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
			line = strings.TrimSpace(line)
			if browserService(line) {
				continue
			}
			mu.Lock()
			seen = append(seen, line)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return l.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
