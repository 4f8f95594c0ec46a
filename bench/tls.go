package bench

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// TLSOptions is how the client speaks TLS (Config.TLS; nil is plain TCP),
// spelled as redis-benchmark and memtier_benchmark spell it. The CA, the
// client certificate and its key come from files (--cacert, --cert, --key)
// or, for a caller that holds them in memory (an ephemeral CA made for a
// run), from PEM bytes; a PEM field wins over its file.
type TLSOptions struct {
	CACertFile string // PEM CA certificates the server's certificate must chain to; none: the system's roots
	CertFile   string // PEM client certificate, for servers that check clients (tls-auth-clients)
	KeyFile    string // PEM private key of CertFile

	CACertPEM, CertPEM, KeyPEM []byte

	// SNI is the server name sent and checked against the certificate;
	// empty: the host connected to (with --cluster-bench, each node's).
	SNI string
	// Insecure skips verifying the server's certificate (--insecure).
	Insecure bool
}

// Build returns the tls.Config the options describe, without a ServerName
// (dialTLS sets one per host). Records are always full-sized: a benchmark
// wants the throughput of 16 KiB records, as OpenSSL's peers send.
func (o *TLSOptions) Build() (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: o.Insecure, DynamicRecordSizingDisabled: true, MinVersion: tls.VersionTLS12}
	caPEM, err := pemOf(o.CACertPEM, o.CACertFile, "--cacert")
	if err != nil {
		return nil, err
	}
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, usagef("--cacert %s holds no PEM certificate", o.CACertFile)
		}
		cfg.RootCAs = pool
	}
	certPEM, err := pemOf(o.CertPEM, o.CertFile, "--cert")
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemOf(o.KeyPEM, o.KeyFile, "--key")
	if err != nil {
		return nil, err
	}
	switch {
	case certPEM != nil && keyPEM != nil:
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, usagef("--cert %s and --key %s: %v", o.CertFile, o.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case certPEM != nil:
		return nil, usagef("--cert %s needs --key: the client certificate's private key", o.CertFile)
	case keyPEM != nil:
		return nil, usagef("--key %s needs --cert: the client certificate it belongs to", o.KeyFile)
	}
	return cfg, nil
}

// pemOf is inline PEM if given, else the named file's content, else nil.
func pemOf(inline []byte, file, flag string) ([]byte, error) {
	if inline != nil || file == "" {
		return inline, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	return b, nil
}

// ApplyURI sets cfg's host, port, user, password and TLS from a URI as the
// peers take it: redis://[user[:password]@]host[:port][/0], rediss://… for
// TLS (the port defaults to 6379 for both). A password in the URI replaces
// --auth; TLS options already set (--cacert, --sni) are kept.
func ApplyURI(cfg *Config, uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return usagef("--uri %q: %v", uri, err)
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		if cfg.TLS == nil {
			cfg.TLS = &TLSOptions{}
		}
	default:
		return usagef("--uri %q: the scheme is %q, want redis:// or rediss:// (TLS)", uri, u.Scheme)
	}
	if u.Hostname() == "" {
		return usagef("--uri %q names no host", uri)
	}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		return usagef("--uri %q selects database %s: the benchmark uses database 0", uri, db)
	}
	if u.RawQuery != "" {
		return usagef("--uri %q: query parameters (%s) are not understood; give TLS settings as flags", uri, u.RawQuery)
	}
	cfg.Host = u.Hostname()
	cfg.Port = 6379
	if p := u.Port(); p != "" {
		if cfg.Port, err = strconv.Atoi(p); err != nil {
			return usagef("--uri %q: port %q is not a number", uri, p)
		}
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			cfg.Auth = pw
		} else if cfg.User != "" && cfg.Auth == "" {
			// redis://password@host: Redis's clients read a lone user part
			// as the password of the default user.
			cfg.User, cfg.Auth = "", cfg.User
		}
	}
	return nil
}

// tlsHandshakeError says in one sentence what made the TLS handshake with
// addr fail: the server's certificate (an unknown CA, expired, another
// name), a client certificate wanted or refused, or no TLS at that port.
func tlsHandshakeError(addr, serverName string, o *TLSOptions, err error) error {
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		header   tls.RecordHeaderError
	)
	where := "bench: TLS handshake with " + addr
	switch {
	case errors.As(err, &unknown):
		trust := "a CA the system trusts (give --cacert, or --insecure)"
		if o.CACertFile != "" {
			trust = "the CA in --cacert " + o.CACertFile
		} else if o.CACertPEM != nil {
			trust = "the CA given"
		}
		issuer := ""
		if unknown.Cert != nil {
			issuer = fmt.Sprintf(" (issued by %q)", unknown.Cert.Issuer.String())
		}
		return fmt.Errorf("%s: the server's certificate%s is not signed by %s: %w", where, issuer, trust, err)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Errorf("%s: the server's certificate %q has expired or is not yet valid: %w", where, invalid.Cert.Subject.String(), err)
	case errors.As(err, &hostname):
		names := hostname.Certificate.DNSNames
		for _, ip := range hostname.Certificate.IPAddresses {
			names = append(names, ip.String())
		}
		src := "the host connected to; give the right one with --sni"
		if o.SNI != "" {
			src = "--sni"
		}
		return fmt.Errorf("%s: the server's certificate is for %s, not %q (%s): %w", where, strings.Join(names, ", "), serverName, src, err)
	case errors.As(err, &header):
		return fmt.Errorf("%s: the server did not answer in TLS (is %s its plain port rather than its tls-port?): %w", where, addr, err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%s: the server did not answer in TLS within %v (is %s its plain port rather than its tls-port?): %w", where, handshakeTimeout, addr, err)
	case strings.Contains(err.Error(), "tls: certificate required"):
		return fmt.Errorf("%s: the server requires a client certificate: give --cert and --key: %w", where, err)
	case strings.Contains(err.Error(), "tls: bad certificate"), strings.Contains(err.Error(), "tls: unknown certificate authority"):
		return fmt.Errorf("%s: the server refused the client certificate --cert %s: %w", where, o.CertFile, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}
