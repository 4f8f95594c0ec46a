package bench

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
)

// tlsRecordReader decrypts the server's TLS 1.3 records for an offline
// event loop, straight from the connection's ciphertext buffer into its
// reply buffer. Why not tls.Conn.Read: each record it reads costs it an
// allocation (the reader it wraps its net.Conn in to fill its own buffer),
// one per batch of replies, and a copy of every record into that buffer;
// the loop keeps no allocation per op. The keys are the ones crypto/tls
// agreed: the server's application traffic secret, which tls.Config's
// KeyLogWriter hands over (keyLog keeps it in memory, nowhere else), and
// the record sequence number, which tlsPipe counts. crypto/tls still
// encrypts the requests. Only AES-GCM under TLS 1.3 is followed this way:
// anything else (TLS 1.2, ChaCha20-Poly1305) is read by tls.Conn.
type tlsRecordReader struct {
	aead  cipher.AEAD
	iv    [12]byte
	nonce [12]byte
	seq   uint64
}

// keyLog is a connection's tls.Config.KeyLogWriter: it keeps the server's
// TLS 1.3 application traffic secret.
type keyLog struct {
	serverSecret []byte
}

func (k *keyLog) Write(line []byte) (int, error) {
	f := bytes.Fields(line)
	if len(f) == 3 && string(f[0]) == "SERVER_TRAFFIC_SECRET_0" {
		k.serverSecret, _ = hex.DecodeString(string(f[2]))
	}
	return len(line), nil
}

// newRecordReader returns the reader of a connection's next server record,
// the seq-th of its application records, or nil when the connection's
// version or cipher suite is not one it follows.
func newRecordReader(state tls.ConnectionState, secret []byte, seq uint64) (*tlsRecordReader, error) {
	if state.Version != tls.VersionTLS13 || secret == nil {
		return nil, nil
	}
	var h func() hash.Hash
	keyLen := 0
	switch state.CipherSuite {
	case tls.TLS_AES_128_GCM_SHA256:
		h, keyLen = sha256.New, 16
	case tls.TLS_AES_256_GCM_SHA384:
		h, keyLen = sha512.New384, 32
	default:
		return nil, nil
	}
	key, err := expandLabel(h, secret, "key", keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := expandLabel(h, secret, "iv", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	r := &tlsRecordReader{aead: aead, seq: seq}
	copy(r.iv[:], iv)
	return r, nil
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context
// (RFC 8446, section 7.1).
func expandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(length))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), length)
}

// TLS record content types.
const (
	recordAlert           = 21
	recordHandshake       = 22
	recordApplicationData = 23
)

// open decrypts the whole record rec (header included) by appending its
// plaintext to dst, whose spare capacity must hold it, and returns the
// content and its type.
func (r *tlsRecordReader) open(dst, rec []byte) ([]byte, byte, error) {
	if rec[0] != recordApplicationData {
		return nil, 0, fmt.Errorf("TLS record of type %d after the handshake, want an encrypted one (23)", rec[0])
	}
	r.nonce = r.iv
	for i := range 8 {
		r.nonce[4+i] ^= byte(r.seq >> (56 - 8*i))
	}
	out, err := r.aead.Open(dst, r.nonce[:], rec[tlsRecordHeader:], rec[:tlsRecordHeader])
	if err != nil {
		return nil, 0, fmt.Errorf("the server's TLS record %d does not authenticate: %w", r.seq, err)
	}
	r.seq++
	content := out[len(dst):]
	i := len(content) - 1
	for i >= 0 && content[i] == 0 {
		i--
	}
	if i < 0 {
		return nil, 0, fmt.Errorf("the server's TLS record %d has no content type", r.seq-1)
	}
	return content[:i], content[i], nil
}
