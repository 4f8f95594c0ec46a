package server

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

// fuzzServer is the server one fuzzing process sends its inputs to. It is
// replaced when an input shut it down, and every fuzzRotate inputs so the
// log does not grow without bound over millions of inputs.
type fuzzServer struct {
	s      *Server
	cancel context.CancelFunc
	done   chan error
	inputs int
}

const fuzzRotate = 20000

func (fs *fuzzServer) get(t *testing.T) *Server {
	t.Helper()
	if fs.s != nil {
		select {
		case <-fs.done:
			fs.s = nil // stopped by a SHUTDOWN in an earlier input
		default:
			if fs.inputs >= fuzzRotate {
				fs.stop(t)
			}
		}
	}
	if fs.s == nil {
		// A tiered store on the in-RAM device, so inputs exercise device
		// reads and the reply merging as well as memory hits.
		s, err := New(Config{Bind: "127.0.0.1", ScatterGatherGet: true, MaxQueryBytes: 256 << 10, Store: store.Config{
			StorageTier: true, MemoryBytes: 64 << 10, PageBytes: 16 << 10, SegmentBytes: 1 << 20,
			IndexBytes: 64 << 10, DeviceType: "localmemory",
		}}, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		fs.s, fs.cancel, fs.done, fs.inputs = s, cancel, make(chan error, 1), 0
		go func() { fs.done <- s.Serve(ctx) }()
	}
	fs.inputs++
	return fs.s
}

func (fs *fuzzServer) stop(t testing.TB) {
	if fs.s == nil {
		return
	}
	fs.cancel()
	select {
	case err := <-fs.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Serve did not return within 30 s of its context being cancelled")
	}
	fs.s = nil
}

// FuzzConn sends arbitrary bytes to a real server over loopback, closes
// the sending half, and reads everything the server answers. The server
// must neither crash nor hang, every reply must be well-formed RESP2, and
// the server must still answer a new client afterwards.
func FuzzConn(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "seeds", "*.resp"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var fs fuzzServer
	f.Cleanup(func() { fs.stop(f) })
	f.Fuzz(func(t *testing.T, in []byte) {
		s := fs.get(t)
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		werr := make(chan error, 1)
		go func() {
			_, err := nc.Write(in)
			nc.(*net.TCPConn).CloseWrite()
			werr <- err
		}()
		r := bufio.NewReader(nc)
		for {
			if _, err := r.Peek(1); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("server still silent 20 s after the input ended: it hangs")
				}
				break // EOF or reset: the server closed the connection
			}
			// The server writes whole replies: a reply cut short is a bug,
			// unless the kernel reset the connection (closed with unread
			// input) and dropped the rest.
			if reply, err := readReply(r); err != nil && !isReset(err) {
				t.Fatalf("malformed reply %q: %v", reply, err)
			}
		}
		<-werr
		select {
		case <-fs.done:
			return // the input said SHUTDOWN
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatalf("dial after the input: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		c.Write([]byte("PING\r\n"))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil && isShutdown(&fs) {
			return
		}
		if line != "+PONG\r\n" {
			t.Fatalf("PING after the input: got %q, %v", line, err)
		}
	})
}

func isShutdown(fs *fuzzServer) bool {
	select {
	case <-fs.done:
		return true
	case <-time.After(time.Second):
		return false
	}
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}
