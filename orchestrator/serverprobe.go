package orchestrator

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/tierbench/tierbench/orchestrator/plan"

	"github.com/tierbench/tierbench/results"
)

// How the runner reaches a row's server: RESP commands and the evidence
// (device reads, placement, the load's witnesses), read here or, for a
// server on another host, there (remote.go).

// serverProbe answers the runner's questions about a row's server:
// RESP commands, and its device reads and placement (the evidence).
type serverProbe interface {
	do(ctx context.Context, args ...string) (any, error)
	evidence(ctx context.Context) (readBytes int64, pl results.Placement, err error)
	// writeBytes is the server process's /proc/<pid>/io write_bytes; an
	// error when it is not read (a server on another host).
	writeBytes(ctx context.Context) (int64, error)
	// prove checks that the process whose evidence is read owns the
	// server's listening socket.
	prove(ctx context.Context) (results.OwnerProof, error)
	witness(ctx context.Context) (ServerWitness, error)
	// sample GETs keys, or, given none, a uniform sample of the whole
	// key space drawn where the probe runs, and counts what was wrong.
	sample(ctx context.Context, cfg plan.Config, keys []uint64) (results.SampleCheck, error)
	// cpuTicks is the server process's utime and stime.
	cpuTicks(ctx context.Context) (procTicks, error)
	// counts says whether evidence can be read: the process is known.
	counts() bool
}

// localProbe asks a server this machine reaches, with /proc read here.
type localProbe struct {
	addr string
	pid  int
	proc procRoot
	acc  access // TLS and the password
}

func (p localProbe) do(ctx context.Context, args ...string) (any, error) {
	c, err := p.acc.dial(ctx, p.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do(args...)
}

func (p localProbe) prove(ctx context.Context) (results.OwnerProof, error) {
	return p.proc.proveServer(ctx, p.acc, p.addr, p.pid)
}

func (p localProbe) witness(ctx context.Context) (ServerWitness, error) {
	return readWitness(ctx, p.addr, p.acc)
}

func (p localProbe) sample(ctx context.Context, cfg plan.Config, keys []uint64) (results.SampleCheck, error) {
	if keys == nil {
		return runSample(ctx, p.addr, p.acc, cfg)
	}
	c, err := p.acc.dial(ctx, p.addr)
	if err != nil {
		return results.SampleCheck{}, err
	}
	defer c.Close()
	return sampleGets(ctx, c, cfg, keys)
}

func (p localProbe) counts() bool { return p.pid > 0 }

func (p localProbe) cpuTicks(context.Context) (procTicks, error) {
	if p.pid <= 0 {
		return procTicks{}, errPIDUnknown
	}
	return p.proc.cpuTicks(p.pid)
}

// errPIDUnknown is the note of a server whose process is not known here.
var errPIDUnknown = errors.New("the server's pid is unknown")

func (p localProbe) evidence(context.Context) (int64, results.Placement, error) {
	n, err := p.proc.readBytes(p.pid)
	if err != nil {
		return 0, results.Placement{}, err
	}
	pl, err := p.proc.placement(p.pid)
	return n, pl, err
}

func (p localProbe) writeBytes(context.Context) (int64, error) {
	if p.pid <= 0 {
		return 0, errPIDUnknown
	}
	return p.proc.writeBytes(p.pid)
}

func probeDBSize(ctx context.Context, p serverProbe) (int64, error) {
	v, err := p.do(ctx, "DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("orchestrator: DBSIZE: want an integer reply, got %T", v)
	}
	return n, nil
}

func probeInfo(ctx context.Context, p serverProbe, section string) (map[string]string, error) {
	v, err := p.do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("orchestrator: INFO %s: want a bulk string reply, got %T", section, v)
	}
	return parseInfo(s), nil
}

// waitProbe waits until the server answers PING.
func waitProbe(ctx context.Context, p serverProbe, timeout time.Duration) error {
	return waitFor(ctx, timeout, func(ctx context.Context) error {
		_, err := p.do(ctx, "PING")
		return err
	})
}

// ServerWitness is what the load check reads from the server itself: its
// key count, INFO store (nil when the server refuses the section) and
// what INFO server says it is.
type ServerWitness struct {
	Keys  int64              `json:"keys"`
	Store map[string]string  `json:"store"`
	Info  results.ServerInfo `json:"info"`
}

// readWitness reads a server's witnesses over one connection.
func readWitness(ctx context.Context, addr string, acc access) (ServerWitness, error) {
	var w ServerWitness
	c, err := acc.dial(ctx, addr)
	if err != nil {
		return w, err
	}
	defer c.Close()
	if w.Keys, err = c.dbsize(); err != nil {
		return w, err
	}
	if w.Store, err = c.info("store"); err != nil && !isRESPError(err) {
		return w, err
	}
	w.Info, err = c.serverInfo()
	return w, err
}

// runSample runs the sampled GET check over a connection of its own.
func runSample(ctx context.Context, addr string, acc access, cfg plan.Config) (results.SampleCheck, error) {
	c, err := acc.dial(ctx, addr)
	if err != nil {
		return results.SampleCheck{}, err
	}
	defer c.Close()
	return sampledHitCheck(ctx, c, cfg, mathrand.New(mathrand.NewPCG(uint64(time.Now().UnixNano()), 0x7469657262656e63)))
}
