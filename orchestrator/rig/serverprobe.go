package rig

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
// server on another host, there (rig/docker).

// ServerProbe answers the runner's questions about a row's server:
// RESP commands, and its device reads and placement (the evidence).
type ServerProbe interface {
	Do(ctx context.Context, args ...string) (any, error)
	Evidence(ctx context.Context) (readBytes int64, pl results.Placement, err error)
	// WriteBytes is the server process's /proc/<pid>/io write_bytes; an
	// error when it is not read (a server on another host).
	WriteBytes(ctx context.Context) (int64, error)
	// Prove checks that the process whose evidence is read owns the
	// server's listening socket.
	Prove(ctx context.Context) (results.OwnerProof, error)
	Witness(ctx context.Context) (ServerWitness, error)
	// Sample GETs keys, or, given none, a uniform sample of the whole
	// key space drawn where the probe runs, and counts what was wrong.
	Sample(ctx context.Context, cfg plan.Config, keys []uint64) (results.SampleCheck, error)
	// CPUTicks is the server process's utime and stime.
	CPUTicks(ctx context.Context) (ProcTicks, error)
	// Counts says whether evidence can be read: the process is known.
	Counts() bool
}

// LocalProbe asks a server this machine reaches, with /proc read here.
type LocalProbe struct {
	Addr string
	Pid  int
	Proc ProcRoot
	Acc  Access // TLS and the password
}

func (p LocalProbe) Do(ctx context.Context, args ...string) (any, error) {
	c, err := p.Acc.dial(ctx, p.Addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(args...)
}

func (p LocalProbe) Prove(ctx context.Context) (results.OwnerProof, error) {
	return p.Proc.ProveServer(ctx, p.Acc, p.Addr, p.Pid)
}

func (p LocalProbe) Witness(ctx context.Context) (ServerWitness, error) {
	return readWitness(ctx, p.Addr, p.Acc)
}

func (p LocalProbe) Sample(ctx context.Context, cfg plan.Config, keys []uint64) (results.SampleCheck, error) {
	if keys == nil {
		return runSample(ctx, p.Addr, p.Acc, cfg)
	}
	c, err := p.Acc.dial(ctx, p.Addr)
	if err != nil {
		return results.SampleCheck{}, err
	}
	defer c.Close()
	return sampleGets(ctx, c, cfg, keys)
}

func (p LocalProbe) Counts() bool { return p.Pid > 0 }

func (p LocalProbe) CPUTicks(context.Context) (ProcTicks, error) {
	if p.Pid <= 0 {
		return ProcTicks{}, ErrPIDUnknown
	}
	return p.Proc.CPUTicks(p.Pid)
}

// ErrPIDUnknown is the note of a server whose process is not known here.
var ErrPIDUnknown = errors.New("the server's pid is unknown")

func (p LocalProbe) Evidence(context.Context) (int64, results.Placement, error) {
	n, err := p.Proc.ReadBytes(p.Pid)
	if err != nil {
		return 0, results.Placement{}, err
	}
	pl, err := p.Proc.Placement(p.Pid)
	return n, pl, err
}

func (p LocalProbe) WriteBytes(context.Context) (int64, error) {
	if p.Pid <= 0 {
		return 0, ErrPIDUnknown
	}
	return p.Proc.WriteBytes(p.Pid)
}

func ProbeDBSize(ctx context.Context, p ServerProbe) (int64, error) {
	v, err := p.Do(ctx, "DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("orchestrator: DBSIZE: want an integer reply, got %T", v)
	}
	return n, nil
}

func ProbeInfo(ctx context.Context, p ServerProbe, section string) (map[string]string, error) {
	v, err := p.Do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("orchestrator: INFO %s: want a bulk string reply, got %T", section, v)
	}
	return ParseInfo(s), nil
}

// WaitProbe waits until the server answers PING.
func WaitProbe(ctx context.Context, p ServerProbe, timeout time.Duration) error {
	return WaitFor(ctx, timeout, func(ctx context.Context) error {
		_, err := p.Do(ctx, "PING")
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
func readWitness(ctx context.Context, addr string, acc Access) (ServerWitness, error) {
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
func runSample(ctx context.Context, addr string, acc Access, cfg plan.Config) (results.SampleCheck, error) {
	c, err := acc.dial(ctx, addr)
	if err != nil {
		return results.SampleCheck{}, err
	}
	defer c.Close()
	return sampledHitCheck(ctx, c, cfg, mathrand.New(mathrand.NewPCG(uint64(time.Now().UnixNano()), 0x7469657262656e63)))
}
