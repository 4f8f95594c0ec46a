package rig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
)

// ContainerPasswordFile is where a container finds the run's password.
const ContainerPasswordFile = "/tierbench-auth"

// Access is how the run's own probes reach a server: over TLS or plain
// TCP, and the user and password they authenticate with.
type Access struct {
	TLS  *tls.Config // nil: plain TCP
	User string
	Auth string
}

// dial connects to addr and, with a password, authenticates.
func (a Access) dial(ctx context.Context, addr string) (*respConn, error) {
	c, err := DialRESP(ctx, addr, a.TLS)
	if err != nil {
		return nil, err
	}
	if a.Auth != "" {
		args := []string{"AUTH", a.Auth}
		if a.User != "" {
			args = []string{"AUTH", a.User, a.Auth}
		}
		if _, err := c.Do(args...); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// tlsDirAccess is the access of a probe given the directory of the run's
// TLS files (hostprobe --tls-dir, in a container).
func tlsDirAccess(dir, user, auth string) (Access, error) {
	a := Access{User: user, Auth: auth}
	if dir == "" {
		return a, nil
	}
	conf, err := ClientTLSConfig(filepath.Join(dir, TLSCAFile), filepath.Join(dir, TLSClientCertFile), filepath.Join(dir, TLSClientKeyFile), false)
	a.TLS = conf
	return a, err
}

// ContainerTLSDir is where a container finds the run's TLS files.
const ContainerTLSDir = "/tierbench-tls"

// The TLS files' names, in containerTLSDir and in the run's state dir.
const (
	TLSCAFile         = "ca.crt"
	TLSServerCertFile = "server.crt"
	TLSServerKeyFile  = "server.key"
	TLSClientCertFile = "client.crt"
	TLSClientKeyFile  = "client.key"
)

// ClientTLSConfig is the TLS configuration of a probe that trusts the CA
// in caFile (the system's roots when ""), presents the certificate in
// certFile and keyFile when given, and skips verification when insecure.
func ClientTLSConfig(caFile, certFile, keyFile string, insecure bool) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("orchestrator: the TLS CA: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("orchestrator: the TLS CA %s holds no PEM certificate", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("orchestrator: the TLS client certificate: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}
