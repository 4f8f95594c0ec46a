package bench

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socket does a connection's hot-path reads and writes as raw read(2) and
// write(2) calls on its non-blocking descriptor, waiting for readiness
// through Go's netpoller only when the kernel says EAGAIN.
//
// Why not net.Conn: each of its syscalls enters the scheduler's syscall
// state, and when the process was idle (every connection waiting for the
// server) that wakes the runtime's sysmon thread — a futex wake-up and two
// context switches per pipelined batch, which on a client pinned to one CPU
// cost more than the parsing. A non-blocking socket call never blocks, so
// it may bypass that state safely.
//
// The read and write callbacks are built once, so no call allocates. A
// socket is used by one goroutine at a time for reading and one for
// writing; deadlines and Close on the net.Conn still interrupt its waits.
//
// Over TLS, Read and Write go through tls, whose records pass through
// pipe: to the raw calls, or to an event loop's buffers once detached.
type socket struct {
	conn net.Conn // the TCP connection: deadlines and Close
	rc   syscall.RawConn
	tls  *tls.Conn // nil over plain TCP
	pipe *tlsPipe

	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	wbuf  []byte
	werr  syscall.Errno
	readF func(fd uintptr) bool
	writF func(fd uintptr) bool
}

func newSocket(conn net.Conn) (*socket, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("bench: %T has no file descriptor", conn)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("bench: raw connection: %w", err)
	}
	s := &socket{conn: conn, rc: rc}
	s.readF = s.readOnce
	s.writF = s.writeSome
	return s, nil
}

// readOnce is called by RawConn.Read; false means "wait until readable".
func (s *socket) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.rbuf[0])), uintptr(len(s.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			s.rn, s.rerr = int(n), 0
		default:
			s.rn, s.rerr = 0, e
		}
		return true
	}
}

// writeSome writes as much of wbuf as the socket takes; false means "wait
// until writable" with the rest still in wbuf.
func (s *socket) writeSome(fd uintptr) bool {
	for len(s.wbuf) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.wbuf[0])), uintptr(len(s.wbuf)))
		switch e {
		case 0:
			s.wbuf = s.wbuf[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = e
			return true
		}
	}
	return true
}

// Read reads at least one byte into p, or returns io.EOF when the server
// closed the connection.
func (s *socket) Read(p []byte) (int, error) {
	if s.tls != nil {
		return s.tls.Read(p)
	}
	return s.readRaw(p)
}

// Write writes all of p.
func (s *socket) Write(p []byte) (int, error) {
	if s.tls != nil {
		return s.tls.Write(p)
	}
	return s.writeRaw(p)
}

// readRaw is Read on the TCP connection itself.
func (s *socket) readRaw(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rbuf = p
	err := s.rc.Read(s.readF)
	s.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case s.rerr != 0:
		return 0, s.rerr
	case s.rn == 0:
		return 0, io.EOF
	}
	return s.rn, nil
}

// writeRaw is Write on the TCP connection itself.
func (s *socket) writeRaw(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wbuf, s.werr = p, 0
	err := s.rc.Write(s.writF)
	written := len(p) - len(s.wbuf)
	s.wbuf = nil
	switch {
	case err != nil:
		return written, err
	case s.werr != 0:
		return written, s.werr
	}
	return written, nil
}

// detach hands the connection's socket to a clientLoop: it returns a
// duplicate of the descriptor and closes the net.Conn, which takes the
// original out of Go's netpoller, so that readiness is reported to the
// loop's epoll alone and the runtime never wakes for it. The duplicate
// shares the open file, so it is non-blocking too; the caller closes it.
func (s *socket) detach() (int, error) {
	fd, derr := -1, error(nil)
	if err := s.rc.Control(func(raw uintptr) {
		fd, derr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, fmt.Errorf("bench: raw connection: %w", err)
	}
	if derr != nil {
		return -1, fmt.Errorf("bench: dup socket: %w", derr)
	}
	s.conn.Close()
	return fd, nil
}
