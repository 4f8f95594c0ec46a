package server

import (
	"crypto/tls"
	"net"
	"time"
)

// TLS handshakes, kept apart from the clients they become.
//
// A client that connects to the TLS port and sends nothing must hold
// neither a client slot nor a goroutine for ever, nor keep Serve from
// returning. So the server runs each handshake itself, on the connection's
// own goroutine, under Config.TLSHandshakeTimeout whatever `timeout` says,
// and only a connection whose handshake is done becomes a client and
// counts against maxclients: the refusal at maxclients is then written
// over a finished handshake and cannot wait for one. (Redis counts a
// connection before its handshake and, at maxclients, drops a TLS one
// without a word.) Handshakes in progress are bounded too, by maxclients:
// one more closes the oldest, so a burst of silent clients costs the
// server at most maxclients descriptors, and a real client that arrives
// after them still gets its handshake at once.

// startHandshake starts the TLS handshake of raw, a connection the TLS
// listener accepted, and on success serves it (startConn); false when the
// server is stopping.
func (s *Server) startHandshake(raw net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.handshakes.Len() >= s.cfg.MaxClients {
		oldest := s.handshakes.Front()
		s.handshakes.Remove(oldest)
		oldest.Value.(net.Conn).Close()
		s.stats.handshakesDropped.Add(1)
	}
	el := s.handshakes.PushBack(raw)
	s.wg.Go(func() {
		raw.SetDeadline(time.Now().Add(s.cfg.TLSHandshakeTimeout))
		tc := tls.Server(raw, s.tlsCfg)
		err := tc.Handshake()
		s.mu.Lock()
		s.handshakes.Remove(el) // a no-op when it was dropped as the oldest
		s.mu.Unlock()
		if err != nil {
			s.stats.handshakesFailed.Add(1)
			raw.Close()
			return
		}
		raw.SetDeadline(time.Time{})
		if !s.startConn(tc) {
			raw.Close() // stopping: no close_notify to wait on
		}
	})
	return true
}
