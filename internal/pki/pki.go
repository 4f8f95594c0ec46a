// Package pki makes an ephemeral certificate authority and the certificates
// it signs, in memory, for TLS between tierbench's clients and the servers
// it measures: a CA, server certificates for given DNS names and IP
// addresses, client certificates, and (for tests) certificates that have
// already expired. Nothing is kept on disk unless a WritePEM method writes
// it, and a CA's private key has no writer at all: it lives as long as the
// CA value does.
//
// Every key is ECDSA on P-256. It is the one curve that every TLS stack a
// benchmark meets accepts for certificates (Go's crypto/tls, the OpenSSL
// behind redis-server, redis-benchmark and memtier_benchmark, managed
// services), its keys are made in microseconds where an RSA-2048 key takes
// tens to hundreds of milliseconds (tests make several per run), and its
// handshake signatures are cheaper than RSA's at the same strength, so a
// measured TLS cost is the record layer's and not the key type's. Ed25519
// would be as fast but is not accepted everywhere for certificates.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// DefaultValidity is how long a CA or a certificate is valid when Cert.Valid
// is zero: long enough for any run, short enough that a leaked file soon
// means nothing.
const DefaultValidity = 7 * 24 * time.Hour

// backdate is how far before now a certificate becomes valid, so that a
// host whose clock is a little behind the issuer's still accepts it.
const backdate = time.Hour

// CA is a certificate authority made in memory by NewCA.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// Cert says what certificate Issue makes.
type Cert struct {
	// Name is the subject's common name; it is informational (verification
	// uses DNSNames and IPs).
	Name string
	// DNSNames and IPs are the subject alternative names a server
	// certificate is valid for. A client certificate may leave them empty.
	DNSNames []string
	IPs      []net.IP
	// Client makes a client certificate (extended key usage client
	// authentication only). Otherwise the certificate is a server one,
	// usable for both server and client authentication, as Redis uses its
	// server certificate for outgoing replication connections too.
	Client bool
	// Valid is how long the certificate is valid from now; zero means
	// DefaultValidity.
	Valid time.Duration
	// Expired makes a certificate whose validity ended an hour ago (for
	// tests of a client or server refusing it). Valid is then ignored.
	Expired bool
}

// KeyPair is a certificate issued by a CA and its private key.
type KeyPair struct {
	// Cert is the parsed certificate.
	Cert    *x509.Certificate
	certPEM []byte
	keyPEM  []byte
}

// NewCA makes a self-signed CA named name, valid for DefaultValidity.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: CA %q key: %w", name, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("pki: CA %q: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"tierbench"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(DefaultValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA %q certificate: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: CA %q certificate: %w", name, err)
	}
	return &CA{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der)}, nil
}

// Certificate returns the CA's parsed certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertPEM returns the CA's certificate in PEM, what a peer's --cacert or
// tls-ca-cert-file reads.
func (ca *CA) CertPEM() []byte { return ca.certPEM }

// Pool returns a certificate pool holding the CA's certificate alone, for a
// tls.Config's RootCAs or ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// WritePEM writes the CA's certificate (never its key) to path in PEM,
// readable by all (mode 0644): it is public.
func (ca *CA) WritePEM(path string) error {
	if err := os.WriteFile(path, ca.certPEM, 0o644); err != nil {
		return fmt.Errorf("pki: write CA certificate: %w", err)
	}
	return nil
}

// Issue makes a new key and a certificate for it signed by the CA, as c says.
func (ca *CA) Issue(c Cert) (*KeyPair, error) {
	if !c.Client && len(c.DNSNames) == 0 && len(c.IPs) == 0 {
		return nil, fmt.Errorf("pki: server certificate %q has no DNS name or IP address to be valid for", c.Name)
	}
	if c.Valid < 0 {
		return nil, fmt.Errorf("pki: certificate %q validity %v is negative (use Expired for an expired one)", c.Name, c.Valid)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate %q key: %w", c.Name, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("pki: certificate %q: %w", c.Name, err)
	}
	now := time.Now()
	valid := c.Valid
	if valid == 0 {
		valid = DefaultValidity
	}
	notBefore, notAfter := now.Add(-backdate), now.Add(valid)
	if c.Expired {
		notBefore, notAfter = now.Add(-2*backdate-DefaultValidity), now.Add(-backdate)
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if c.Client {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: c.Name, Organization: []string{"tierbench"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		DNSNames:     c.DNSNames,
		IPAddresses:  c.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate %q: %w", c.Name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate %q: %w", c.Name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("pki: certificate %q key: %w", c.Name, err)
	}
	return &KeyPair{Cert: cert, certPEM: pemBlock("CERTIFICATE", der), keyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

// CertPEM returns the certificate in PEM.
func (kp *KeyPair) CertPEM() []byte { return kp.certPEM }

// KeyPEM returns the private key in PEM (PKCS #8), what tls-key-file and
// --key read.
func (kp *KeyPair) KeyPEM() []byte { return kp.keyPEM }

// TLSCertificate returns the pair as a tls.Certificate for a tls.Config's
// Certificates.
func (kp *KeyPair) TLSCertificate() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(kp.certPEM, kp.keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki: certificate %q: %w", kp.Cert.Subject.CommonName, err)
	}
	return c, nil
}

// WritePEM writes the certificate to certPath (mode 0644) and the private
// key to keyPath (mode 0600, readable by its owner alone).
func (kp *KeyPair) WritePEM(certPath, keyPath string) error {
	if err := os.WriteFile(certPath, kp.certPEM, 0o644); err != nil {
		return fmt.Errorf("pki: write certificate: %w", err)
	}
	if err := writePrivate(keyPath, kp.keyPEM); err != nil {
		return fmt.Errorf("pki: write key: %w", err)
	}
	return nil
}

// writePrivate writes b to path with mode 0600, also when path already
// exists with a wider mode.
func writePrivate(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if _, werr := f.Write(b); err == nil {
		err = werr
	}
	return errors.Join(err, f.Close())
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
