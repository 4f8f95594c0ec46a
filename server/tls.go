package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
)

// TLSConfig is the TLS listener of a server, with Redis's configuration
// names and meanings (tls-port, tls-cert-file, tls-key-file,
// tls-ca-cert-file, tls-auth-clients).
type TLSConfig struct {
	// Port is the TLS port (tls-port); 0 picks a free one (see
	// Server.TLSAddr).
	Port int
	// CertFile and KeyFile are the server's certificate (with any
	// intermediates) and private key in PEM.
	CertFile, KeyFile string
	// CAFile holds the CA certificates that client certificates must be
	// signed by, in PEM. It is required unless AuthClients is "no".
	CAFile string
	// AuthClients is "yes" (the default when empty, as in Redis: a client
	// must present a certificate signed by CAFile), "optional" (a client
	// may present one, which must then be valid) or "no".
	AuthClients string
}

// AuthClientsValues are the values TLSConfig.AuthClients takes.
var AuthClientsValues = []string{"yes", "no", "optional"}

// serverTLS reads the files cfg names and returns the tls.Config the TLS
// listener serves with: TLS 1.2 and 1.3, as Redis's default tls-protocols.
func serverTLS(cfg *TLSConfig) (*tls.Config, error) {
	var clientAuth tls.ClientAuthType
	switch cfg.AuthClients {
	case "", "yes":
		cfg.AuthClients, clientAuth = "yes", tls.RequireAndVerifyClientCert
	case "optional":
		clientAuth = tls.VerifyClientCertIfGiven
	case "no":
		clientAuth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("server: tls-auth-clients %q: want yes, no or optional", cfg.AuthClients)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("server: tls-port %d out of range 0-65535", cfg.Port)
	}
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, fmt.Errorf("server: TLS needs tls-cert-file and tls-key-file (got %q and %q)", cfg.CertFile, cfg.KeyFile)
	}
	pair, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("server: tls-cert-file %s with tls-key-file %s: %w", cfg.CertFile, cfg.KeyFile, err)
	}
	tc := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		ClientAuth:   clientAuth,
	}
	if cfg.CAFile == "" {
		if clientAuth != tls.NoClientCert {
			return nil, fmt.Errorf("server: tls-auth-clients %s needs tls-ca-cert-file, the CA that signs client certificates", cfg.AuthClients)
		}
		return tc, nil
	}
	pem, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("server: tls-ca-cert-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("server: tls-ca-cert-file %s holds no PEM certificate", cfg.CAFile)
	}
	tc.ClientCAs = pool
	return tc, nil
}

// listen opens the plain listener (unless cfg.NoPlain) and the TLS one
// (when cfg.TLS is set). The TLS listener accepts plain TCP connections:
// the server runs each handshake itself, under a deadline (handshake.go),
// with tc.
func listen(cfg Config) (plain, secure net.Listener, tc *tls.Config, err error) {
	if cfg.NoPlain && cfg.TLS == nil {
		return nil, nil, nil, fmt.Errorf("server: no plain port and no TLS port: nothing to listen on")
	}
	if cfg.TLS != nil {
		if tc, err = serverTLS(cfg.TLS); err != nil {
			return nil, nil, nil, err
		}
	}
	if !cfg.NoPlain {
		addr := net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.Port))
		if plain, err = net.Listen("tcp", addr); err != nil {
			return nil, nil, nil, fmt.Errorf("server: listen on %s: %w", addr, err)
		}
	}
	if tc != nil {
		addr := net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.TLS.Port))
		if secure, err = net.Listen("tcp", addr); err != nil {
			if plain != nil {
				plain.Close()
			}
			return nil, nil, nil, fmt.Errorf("server: listen for TLS on %s: %w", addr, err)
		}
	}
	return plain, secure, tc, nil
}

// tlsConfigValues are the TLS parameters CONFIG GET answers.
func (s *Server) tlsConfigValues() [][2]string {
	t := s.cfg.TLS
	if t == nil {
		t = &TLSConfig{AuthClients: "yes"}
	}
	return [][2]string{
		{"tls-auth-clients", t.AuthClients},
		{"tls-ca-cert-file", t.CAFile},
		{"tls-cert-file", t.CertFile},
		{"tls-key-file", t.KeyFile},
		{"tls-port", strconv.Itoa(listenerPort(s.tlsLn))},
	}
}

// listenerPort is ln's TCP port, 0 without a listener.
func listenerPort(ln net.Listener) int {
	if ln == nil {
		return 0
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// rawConn is the TCP connection under nc, which may be a TLS one.
func rawConn(nc net.Conn) net.Conn {
	if t, ok := nc.(*tls.Conn); ok {
		return t.NetConn()
	}
	return nc
}
