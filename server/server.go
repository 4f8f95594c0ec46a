package server

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/server/store"
)

// Config is what `tierbench server` is started with.
type Config struct {
	Bind string // listen address, e.g. 127.0.0.1
	Port int    // TCP port; 0 picks a free one (see Server.Addr)
	// NoPlain turns the plain TCP listener off (Redis's port 0): TLS must
	// then be set.
	NoPlain bool
	// TLS, when set, serves RESP over TLS on its own port as well.
	TLS *TLSConfig
	// Auth, when not empty, is the default user's password, which clients
	// must give with AUTH (or HELLO ... AUTH default <password>) before
	// any other command (Redis's requirepass).
	Auth string
	// Users are ACL users in Redis's rule spelling, one a string, such as
	// "alice on >secret ~* &* +@all" (see acl.go for the rules taken).
	Users []string
	// ScatterGatherGet submits the device reads of all GETs of one
	// pipelined batch together and waits for them once (Garnet's --sg-get).
	// Without it every GET that misses memory waits for its own read.
	ScatterGatherGet bool
	// MaxQueryBytes caps one connection's read buffer, so the largest
	// request it accepts (default 1 GiB, Redis's client-query-buffer-limit).
	// A client that pipelines more is not read from until the buffered
	// requests are answered.
	MaxQueryBytes int
	// MaxClients is the most connections served at once (Redis's
	// maxclients, default 10000); one more is answered "-ERR max number
	// of clients reached" and closed.
	MaxClients int
	// MaxReplyBytes is the reply backlog after which a connection writes
	// what it has before parsing further requests (default 256 KiB).
	MaxReplyBytes int
	// TimeoutSeconds closes a client idle that long (Redis's timeout;
	// 0, the default: never).
	TimeoutSeconds int
	// TLSHandshakeTimeout bounds a TLS connection's handshake, whatever
	// TimeoutSeconds says (0: DefaultTLSHandshakeTimeout).
	TLSHandshakeTimeout time.Duration
	// AuthTimeout bounds the life of a connection that has not
	// authenticated, when the server requires a password (0:
	// DefaultAuthTimeout).
	AuthTimeout time.Duration
	// ClientOutputBufferLimit is Redis's client-output-buffer-limit value,
	// "class hard soft seconds" repeated ("" for
	// DefaultClientOutputBufferLimit); only the normal class applies.
	ClientOutputBufferLimit string
	// MaxPendingReadBytes bounds the device reads one connection has in
	// flight and the replies they gathered before they are written
	// (default 16 MiB). Reads beyond it wait for earlier ones to be
	// answered; none is refused.
	MaxPendingReadBytes int64
	Store               store.Config
	// Cluster, when set, makes the server one master of a static cluster
	// (cluster.go): it serves only its slots and redirects the rest.
	Cluster *ClusterConfig
}

// Defaults for the zero values of Config.
const (
	DefaultPort          = 6379
	DefaultMaxQueryBytes = 1 << 30
	DefaultMaxReplyBytes = 256 << 10
	DefaultMaxClients    = 10000
	// DefaultTLSHandshakeTimeout is long enough for a handshake across
	// continents and short enough that a client that never finishes one
	// is gone before most people would notice.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultAuthTimeout leaves a person at redis-cli time to type AUTH;
	// a program authenticates at once.
	DefaultAuthTimeout = 60 * time.Second
	initialReadBytes   = 16 << 10
	// maxIdleReadBytes: a read buffer grown past this for a big request
	// goes back to initialReadBytes once that request is answered.
	maxIdleReadBytes = 1 << 20
	// minMaxQueryBytes leaves room for the longest inline line, so an
	// over-long line gets the parser's own error.
	minMaxQueryBytes = 2 * maxInlineBytes
	// maxQueryBytesLimit keeps every offset inside a request in 32 bits
	// (see partialRequest).
	maxQueryBytesLimit = 1<<32 - 1
	// maxPendingGets bounds the device reads one connection has waiting
	// in one batch, and with it the buffer their replies gather in.
	maxPendingGets = 4096
	// DefaultMaxPendingReadBytes is Config.MaxPendingReadBytes's default:
	// room for four 4 MiB values in flight, and far more than 4096 of
	// the reference's 128-byte records take.
	DefaultMaxPendingReadBytes = 16 << 20
	// minPendingReadBytes keeps room for the reads of small records.
	minPendingReadBytes = 1 << 20
)

// ErrClosed is returned by Serve when the server was already stopped.
var ErrClosed = errors.New("server: closed")

// Server is a RESP server on top of one store.
type Server struct {
	cfg    Config
	log    *slog.Logger
	st     *store.Store
	ln     net.Listener // the plain listener; nil with Config.NoPlain
	tlsLn  net.Listener // the TLS listener (plain TCP); nil without Config.TLS
	tlsCfg *tls.Config  // the handshakes' configuration; nil without Config.TLS
	users  *userTable
	start  time.Time
	nextID atomic.Int64

	shutdown     chan struct{} // closed by SHUTDOWN
	shutdownOnce sync.Once

	mu    sync.Mutex
	conns map[*conn]struct{}
	// handshakes are the TLS connections whose handshake runs, oldest
	// first (see handshake.go).
	handshakes list.List
	closed     bool
	wg         sync.WaitGroup

	stats  serverStats
	stages stageStats // INFO latencystats (stages.go)
	live   liveConfig // what CONFIG SET changes

	// exclusive gates every connection's batches while an EXEC runs
	// (see multi.go).
	exclusive execGate
	watches   watchRegistry
	colls     collections // lists, sets, hashes, sorted sets (collections.go)

	cluster *clusterNode // nil unless Config.Cluster is set

	replID string // INFO replication's master_replid, new each start
}

// serverStats are the counters INFO reports. Connections add their
// per-batch counts here once per batch, not per command.
type serverStats struct {
	connectionsReceived atomic.Int64
	connected           atomic.Int64
	commands            atomic.Int64
	hits, misses        atomic.Int64
	deviceGets          atomic.Int64 // GET/MGET keys answered from a device read
	rejected            atomic.Int64 // connections closed for a protocol error
	outputLimitClosed   atomic.Int64 // connections closed at client-output-buffer-limit
	queryLimitClosed    atomic.Int64 // connections closed at client-query-buffer-limit
	refused             atomic.Int64 // connections refused at maxclients
	handshakesFailed    atomic.Int64 // TLS handshakes that failed: refused, past their deadline, or dropped
	handshakesDropped   atomic.Int64 // TLS handshakes closed as the oldest of too many
	authTimeoutClosed   atomic.Int64 // connections closed unauthenticated at the auth timeout
	readBytes           atomic.Int64
	writtenBytes        atomic.Int64
	// The largest read buffer and reply batch any connection has had:
	// they show that a client cannot make the server buffer without bound.
	maxInputBuffer, maxOutputBuffer atomic.Int64
}

// Run opens the store, serves RESP on cfg.Bind:cfg.Port until ctx is
// cancelled or a client sends SHUTDOWN, and then closes everything.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	s, err := New(cfg, logger)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// New opens the store and starts listening; Serve then accepts clients.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1"
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("server: port %d out of range 0-65535", cfg.Port)
	}
	if cfg.MaxQueryBytes <= 0 {
		cfg.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if cfg.MaxQueryBytes < minMaxQueryBytes {
		cfg.MaxQueryBytes = minMaxQueryBytes
	}
	if cfg.MaxQueryBytes > maxQueryBytesLimit {
		return nil, fmt.Errorf("server: query buffer limit %d bytes is above the largest supported, %d", cfg.MaxQueryBytes, maxQueryBytesLimit)
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if cfg.TimeoutSeconds < 0 {
		return nil, fmt.Errorf("server: timeout %d seconds: want 0 (none) or more", cfg.TimeoutSeconds)
	}
	if cfg.TLSHandshakeTimeout < 0 || cfg.AuthTimeout < 0 {
		return nil, fmt.Errorf("server: TLS handshake timeout %v and auth timeout %v: want more than 0 (0 for the default)", cfg.TLSHandshakeTimeout, cfg.AuthTimeout)
	}
	if cfg.TLSHandshakeTimeout == 0 {
		cfg.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if cfg.AuthTimeout == 0 {
		cfg.AuthTimeout = DefaultAuthTimeout
	}
	if cfg.ClientOutputBufferLimit == "" {
		cfg.ClientOutputBufferLimit = DefaultClientOutputBufferLimit
	}
	if err := CheckClientOutputBufferLimit(cfg.ClientOutputBufferLimit); err != nil {
		return nil, err
	}
	outLimits, _ := parseOutputLimits(redisOutputDefaults, cfg.ClientOutputBufferLimit)
	if cfg.MaxPendingReadBytes == 0 {
		cfg.MaxPendingReadBytes = DefaultMaxPendingReadBytes
	}
	if cfg.MaxPendingReadBytes < minPendingReadBytes {
		return nil, fmt.Errorf("server: max-pending-read-bytes %d: want at least %d", cfg.MaxPendingReadBytes, minPendingReadBytes)
	}
	var cn *clusterNode
	if cfg.Cluster != nil {
		var err error
		if cn, err = newClusterNode(cfg.Cluster); err != nil {
			return nil, err
		}
	}
	users, err := newUserTable(cfg.Auth, cfg.Users)
	if err != nil {
		return nil, err
	}
	ln, tlsLn, tlsCfg, err := listen(cfg)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		closeListeners(ln, tlsLn)
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		cfg:      cfg,
		log:      logger,
		st:       st,
		ln:       ln,
		tlsLn:    tlsLn,
		tlsCfg:   tlsCfg,
		users:    users,
		start:    time.Now(),
		shutdown: make(chan struct{}),
		conns:    make(map[*conn]struct{}),
		replID:   newReplID(),
		cluster:  cn,
	}
	s.live.timeoutSeconds.Store(int64(cfg.TimeoutSeconds))
	s.live.output.Store(&outLimits)
	s.live.pendingReadBytes.Store(cfg.MaxPendingReadBytes)
	// The effective configuration, defaults filled in by the store, so the
	// log says what really runs.
	stats, ec := st.Stats(), st.Config()
	logger.Info("tierbench server ready",
		"addr", addrString(ln), "tls_addr", addrString(tlsLn),
		"storage_tier", ec.StorageTier,
		"memory", size.Format(ec.MemoryBytes), "page", size.Format(ec.PageBytes),
		"segment", size.Format(ec.SegmentBytes), "index", size.Format(ec.IndexBytes),
		"index_buckets", stats.IndexBuckets,
		"device_type", stats.DeviceType, "backend", stats.Backend,
		"sector_size", stats.SectorSize, "logdir", ec.LogDir,
		"throttle_limit", ec.ThrottleLimit, "completion_threads", ec.CompletionThreads,
		"io_contexts", ec.IOContexts, "inline_completion", ec.InlineCompletion,
		"sg_get", cfg.ScatterGatherGet, "auth", cfg.Auth != "", "users", users.names(),
		"max_query_bytes", cfg.MaxQueryBytes, "max_clients", cfg.MaxClients,
		"timeout", cfg.TimeoutSeconds, "tls_handshake_timeout", cfg.TLSHandshakeTimeout, "auth_timeout", cfg.AuthTimeout,
		"client_output_buffer_limit", outLimits.String(),
		"max_pending_read_bytes", cfg.MaxPendingReadBytes)
	return s, nil
}

// Addr is the address of the plain listener, or of the TLS one when the
// plain one is off.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return s.tlsLn.Addr()
	}
	return s.ln.Addr()
}

// TLSAddr is the address of the TLS listener, nil without one.
func (s *Server) TLSAddr() net.Addr {
	if s.tlsLn == nil {
		return nil
	}
	return s.tlsLn.Addr()
}

// addrString is ln's address, "" without a listener.
func addrString(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// closeListeners closes the listeners that are open.
func closeListeners(lns ...net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

// Store is the store the server serves (for tests and in-process tools).
func (s *Server) Store() *store.Store { return s.st }

// Serve accepts clients until ctx is cancelled or SHUTDOWN is received,
// then closes the listener and every connection, waits for their
// goroutines, and closes the store. It returns nil on such a stop.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.mu.Unlock()

	stopped := make(chan struct{})
	var reason string
	go func() {
		select {
		case <-ctx.Done():
			reason = "context done: " + context.Cause(ctx).Error()
		case <-s.shutdown:
			reason = "SHUTDOWN received"
		}
		closeListeners(s.ln, s.tlsLn)
		close(stopped)
	}()

	var accepting sync.WaitGroup
	for _, ln := range []net.Listener{s.ln, s.tlsLn} {
		if ln != nil {
			accepting.Go(func() { s.accept(ln, stopped) })
		}
	}
	accepting.Wait()
	var acceptErr error
	<-stopped
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		// The TCP connection, not the TLS one: closing that would
		// first write close_notify, which a client that reads nothing
		// could hold up for seconds, under s.mu.
		rawConn(c.nc).Close()
	}
	for e := s.handshakes.Front(); e != nil; e = e.Next() {
		e.Value.(net.Conn).Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if err := s.st.Close(); err != nil {
		acceptErr = errors.Join(acceptErr, fmt.Errorf("server: close store: %w", err))
	}
	s.log.Info("tierbench server stopped", "reason", reason)
	return acceptErr
}

// accept serves the clients of ln until it is closed or the server stops.
func (s *Server) accept(ln net.Listener, stopped <-chan struct{}) {
	var tempDelay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return // the listener was closed to stop: not a failure
			}
			select {
			case <-stopped:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Out of file descriptors and the like: back off and retry
			// rather than stopping a server that may recover.
			if tempDelay == 0 {
				tempDelay = 5 * time.Millisecond
			} else if tempDelay < time.Second {
				tempDelay *= 2
			}
			s.log.Warn("accept failed", "err", err, "retry_in", tempDelay)
			select {
			case <-time.After(tempDelay):
				continue
			case <-stopped:
				return
			}
		}
		tempDelay = 0
		if tc, ok := rawConn(nc).(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		start := s.startConn
		if ln == s.tlsLn {
			start = s.startHandshake
		}
		if !start(nc) {
			nc.Close()
			return
		}
	}
}

// Shutdown stops the server as the SHUTDOWN command does.
func (s *Server) Shutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdown) })
}

// startConn registers nc and starts its goroutine; false when the server
// is stopping.
func (s *Server) startConn(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if len(s.conns) >= s.cfg.MaxClients {
		// As Redis: tell the client why, then close. A TLS connection
		// comes here only once its handshake is done (handshake.go), so
		// the write cannot wait for one; it is still bounded, on its own
		// goroutine, not the accept loop's.
		s.stats.refused.Add(1)
		s.wg.Go(func() {
			nc.SetWriteDeadline(time.Now().Add(time.Second))
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			rawConn(nc).Close() // no close_notify to wait on
		})
		return true
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.stats.connectionsReceived.Add(1)
	s.stats.connected.Add(1)
	go func() {
		defer s.wg.Done()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.stats.connected.Add(-1)
	}()
	return true
}

// port is the plain TCP port the server listens on, 0 with none.
func (s *Server) port() int { return listenerPort(s.ln) }

// newReplID is a random 40-hex-digit replication id, as Redis makes one.
func newReplID() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}
