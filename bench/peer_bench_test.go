package bench

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// peerTLSFiles writes a CA made for the run and a server certificate it
// signed for 127.0.0.1, returning the CA's file and redis-server's TLS
// arguments.
func peerTLSFiles(b *testing.B) (caFile string, serverArgs []string) {
	_, caFile, certFile, keyFile := testenv.WriteTLSFiles(b, testenv.TLSServerCert)
	return caFile, []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"}
}

// peerWaitUp waits until tierbench bench can reach the server (a PING,
// over TLS when common says so): a load of one key.
func peerWaitUp(b *testing.B, bin string, common []string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := exec.Command(bin, append(append([]string{"bench", "--runtime", "0"}, common...), "--dbsize", "1")...).Run()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// BenchmarkOfflineGETCell profiles one offline cell against a real
// redis-server, over TCP and over TLS: 4 connections, pipeline 64.
//
//	go test -run XXX -bench OfflineGETCell/tls -benchtime 1x -cpuprofile tls.prof ./bench
func BenchmarkOfflineGETCell(b *testing.B) {
	r := testenv.MustTLSRedisServer(b, testenv.TLSServerCert)
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "tls"}[secure]
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Port = r.Port
			if secure {
				cfg.Port, cfg.TLS = r.TLSPort, &TLSOptions{CACertFile: r.CAFile}
			}
			cfg.DBSize = 100000
			cfg.Batch = 64
			cfg.Threads = []int{4}
			cfg.Runtime = 0
			var sink bytes.Buffer
			if err := Run(b.Context(), cfg, &sink, &sink); err != nil {
				b.Fatal(err)
			}
			p, err := cfg.plan()
			if err != nil {
				b.Fatal(err)
			}
			p.Runtime = 2 * time.Second
			b.ReportAllocs()
			b.ResetTimer()
			var ops int64
			for b.Loop() {
				c, err := runCell(b.Context(), p, 4)
				if err != nil {
					b.Fatal(err)
				}
				ops += c.Ops
			}
			b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
