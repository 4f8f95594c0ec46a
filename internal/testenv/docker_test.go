package testenv

import (
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// outcome is a testing.TB that records how a helper ended the test.
type outcome struct {
	testing.TB
	skipped, failed string
}

func (o *outcome) Helper() {}

func (o *outcome) Skipf(format string, args ...any) {
	o.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Fatalf(format string, args ...any) {
	o.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// outcomeOf runs f with an outcome on its own goroutine (Skipf and Fatalf
// end it) and returns how it ended.
func outcomeOf(t *testing.T, f func(testing.TB)) *outcome {
	o := &outcome{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(o) }()
	<-done
	return o
}

// TestDockerSkipsOnlyWithoutAnEngine: MustDocker skips only when told there
// is no Docker; an engine that is configured but absent or silent fails.
func TestDockerSkipsOnlyWithoutAnEngine(t *testing.T) {
	dockerPingTimeout = 2 * time.Second
	t.Cleanup(func() { dockerPingTimeout = 30 * time.Second })
	dir := t.TempDir()
	silent := filepath.Join(dir, "silent.sock")
	l, err := net.Listen("unix", silent)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		l.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	go func() { // accepts and never answers, as a hung engine
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	cases := []struct {
		name, noDocker, host string
		skip, fail           string
	}{
		{"opted out", "1", "unix://" + silent, NoDockerEnv + "=1", ""},
		{"socket gone", "", "unix://" + filepath.Join(dir, "gone.sock"), "", "does not answer"},
		{"engine silent", "", "unix://" + silent, "", "does not answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(NoDockerEnv, c.noDocker)
			t.Setenv("DOCKER_HOST", c.host)
			o := outcomeOf(t, func(tb testing.TB) { MustDocker(tb) })
			if c.skip != "" && !strings.Contains(o.skipped, c.skip) || c.fail != "" && !strings.Contains(o.failed, c.fail) ||
				c.skip == "" && o.skipped != "" || c.fail == "" && o.failed != "" {
				t.Errorf("got skipped %q, failed %q; want a skip containing %q, a failure containing %q", o.skipped, o.failed, c.skip, c.fail)
			}
		})
	}
}
