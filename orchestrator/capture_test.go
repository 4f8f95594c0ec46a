package orchestrator

import (
	"bytes"
	"encoding/binary"
	"encoding/pem"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// capture reads every packet on every interface of a network namespace
// through an AF_PACKET socket opened inside it, and keeps what a test
// searches the traffic for: whether any of a set of secrets crossed it in
// clear, and how many TCP payload bytes went to or from a port.
type capture struct {
	fd int

	mu       sync.Mutex
	secrets  [][]byte
	found    map[string]bool
	tails    map[uint32][]byte // each flow's last payload's end, for a secret split over two
	portSeen map[uint16]int64
	stopping atomic.Bool
	done     chan struct{}
}

// startCapture opens the socket in the namespace at nsPath (a thread of
// its own enters it, then returns to ours) and reads until stop.
func startCapture(t *testing.T, nsPath string) *capture {
	t.Helper()
	c := &capture{found: map[string]bool{}, tails: map[uint32][]byte{}, portSeen: map[uint16]int64{}, done: make(chan struct{})}
	opened := make(chan error, 1)
	go func() {
		// The socket is opened on a thread of its own in the namespace,
		// and the thread then goes back to this process's namespace before
		// it is unlocked. It must not end with the goroutine instead: a
		// thread that ends sends SIGKILL to every child it forked with
		// Pdeathsig (the children of the tests' harness, such as the test
		// hosts' dockerd, which a reused thread may have started; Go issue
		// 27505). If it cannot go back it stays locked and ends.
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			opened <- err
			return
		}
		defer home.Close()
		ns, err := os.Open(nsPath)
		if err != nil {
			opened <- err
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			opened <- err
			return
		}
		c.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(htons(unix.ETH_P_IP)))
		if err == nil {
			// Room for bursts: a dropped packet is a packet not searched
			// (stop reports the kernel's drops).
			unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
			// A read wakes up at least this often to see stop.
			err = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200_000})
		}
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		opened <- err
	}()
	if err := <-opened; err != nil {
		t.Skipf("capture on %s: %v (AF_PACKET needs CAP_NET_RAW)", nsPath, err)
	}
	go c.read()
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// watch adds secrets to look for from now on.
func (c *capture) watch(secrets ...[]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range secrets {
		if len(s) > 0 {
			c.secrets = append(c.secrets, s)
		}
	}
}

func (c *capture) read() {
	defer close(c.done)
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if c.stopping.Load() {
			return
		}
		if err != nil {
			continue // the timeout, or a signal
		}
		c.packet(buf[:n])
	}
}

// packet takes one IPv4 packet (SOCK_DGRAM strips the link header).
func (c *capture) packet(p []byte) {
	if len(p) < 20 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_TCP {
		return
	}
	ihl := int(p[0]&0x0f) * 4
	total := min(int(binary.BigEndian.Uint16(p[2:4])), len(p))
	if total < ihl+20 {
		return
	}
	tcp := p[ihl:total]
	off := int(tcp[12]>>4) * 4
	if off > len(tcp) {
		return
	}
	payload := tcp[off:]
	if len(payload) == 0 {
		return
	}
	src, dst := binary.BigEndian.Uint16(tcp[0:2]), binary.BigEndian.Uint16(tcp[2:4])
	c.mu.Lock()
	defer c.mu.Unlock()
	c.portSeen[src] += int64(len(payload))
	c.portSeen[dst] += int64(len(payload))
	flow := uint32(src)<<16 | uint32(dst)
	joined := append(c.tails[flow], payload...)
	for _, s := range c.secrets {
		if bytes.Contains(joined, s) {
			c.found[string(s)] = true
		}
	}
	c.tails[flow] = append(c.tails[flow][:0], joined[max(0, len(joined)-256):]...)
}

// Stop closes the socket and returns the secrets seen and the TCP
// payload bytes per port; it fails the test when the kernel dropped
// packets the capture did not read.
func (c *capture) Stop(t *testing.T) (found []string, ports map[uint16]int64) {
	t.Helper()
	c.stopping.Store(true)
	<-c.done
	if st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err != nil || st.Drops != 0 {
		t.Errorf("capture: the kernel dropped packets before they were searched: %+v (%v)", st, err)
	}
	unix.Close(c.fd)
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.found {
		found = append(found, s)
	}
	return found, c.portSeen
}

// keySecrets are what of a PEM private key a capture looks for: the
// first line of its base64 body and its DER bytes.
func keySecrets(pemText string) [][]byte {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil
	}
	lines := strings.Split(pemText, "\n")
	return [][]byte{[]byte(lines[1]), block.Bytes}
}

// TestCaptureFindsASecret: the capture the hosts test relies on sees a
// secret sent in clear over loopback, split over two writes, and counts
// the port's bytes; one never sent is not found.
func TestCaptureFindsASecret(t *testing.T) {
	capt := startCapture(t, "/proc/self/ns/net")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	capt.watch([]byte("AUTH 0123456789abcdef"), []byte("never sent"))
	go func() {
		c, err := l.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("*2\r\nAUTH 01234567"))
	time.Sleep(50 * time.Millisecond)
	c.Write([]byte("89abcdef\r\n"))
	c.Close()
	time.Sleep(300 * time.Millisecond)
	found, ports := capt.Stop(t)
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	if len(found) != 1 || found[0] != "AUTH 0123456789abcdef" || ports[port] < 24 {
		t.Errorf("got %q found and %d bytes on port %d, want the AUTH line and at least 24 bytes", found, ports[port], port)
	}
}
