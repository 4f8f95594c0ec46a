package testenv

import (
	"net"
	"testing"
	"time"
)

func TestRedisServerAnswers(t *testing.T) {
	r := MustRedisServer(t)
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", r.Addr, err)
	}
	c.Close()
}

func TestBinaryBuilds(t *testing.T) {
	if p := MustBinary(t); p == "" {
		t.Fatalf("got empty binary path")
	}
}
