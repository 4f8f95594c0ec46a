package rig

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// JsonDocument returns the text from the first '{' to the end: a
// subcommand's JSON is its last output, warnings may come before it.
func JsonDocument(out []byte) ([]byte, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return nil, fmt.Errorf("no JSON document in %q", Clip(out))
	}
	return out[i:], nil
}

func Clip(b []byte) string {
	const n = 600
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// ContainerDataDir is where the data dir is bind-mounted in the server.
const ContainerDataDir = "/data"

// ContainerPasswordFile is where a container finds the run's password.
const ContainerPasswordFile = "/tierbench-auth"

// ImageRun is the image a container runs and, when set, the entrypoint
// that replaces the image's own; the zero imageRun is the run's tierbench
// image.
type ImageRun struct {
	Name       string
	Entrypoint []string
}

// ProcTicks is a process's CPU time from /proc/<pid>/stat, in clock
// ticks: user and system (kernel) apart, so that a server's time in the
// kernel can be set beside fio's.
type ProcTicks struct {
	User, System uint64
}

// Total is user + system; the parser refuses counts whose sum overflows.
func (t ProcTicks) Total() uint64 { return t.User + t.System }

// CpuTicks returns utime and stime of /proc/<pid>/stat in clock ticks.
func (p ProcRoot) CpuTicks(pid int) (ProcTicks, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return ProcTicks{}, fmt.Errorf("orchestrator: read the CPU time of pid %d: %w", pid, err)
	}
	v, err := ParseProcStat(data)
	if err != nil {
		return ProcTicks{}, fmt.Errorf("orchestrator: %s: %w", path, err)
	}
	return v, nil
}

// ParseProcStat returns utime and stime (fields 14 and 15, counting the
// pid as 1) of a /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from after the last ')'.
func ParseProcStat(data []byte) (ProcTicks, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ProcTicks{}, fmt.Errorf("no ')' closing the command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// After the name come field 3 (state) onwards: utime is f[11].
	if len(f) < 13 {
		return ProcTicks{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcTicks{}, fmt.Errorf("utime %q and stime %q are not tick counts", Clip([]byte(f[11])), Clip([]byte(f[12])))
	}
	if u+s < u {
		return ProcTicks{}, fmt.Errorf("utime %d + stime %d overflow", u, s)
	}
	return ProcTicks{User: u, System: s}, nil
}

// ClockTicks returns USER_HZ as sysconf(_SC_CLK_TCK) would, from this
// process's auxiliary vector (no cgo to call sysconf itself), or 100 with
// a note saying why.
func ClockTicks() (int, string) {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return defaultClockTicks, fmt.Sprintf("assumed %d clock ticks per second (USER_HZ): %v", defaultClockTicks, err)
	}
	if hz, ok := auxvValue(auxv, atClockTick); ok && hz > 0 && hz <= 1_000_000 {
		return int(hz), ""
	}
	return defaultClockTicks, fmt.Sprintf("assumed %d clock ticks per second (USER_HZ): /proc/self/auxv has no AT_CLKTCK", defaultClockTicks)
}

// auxvValue finds key in an auxiliary vector of native-endian 64-bit
// (type, value) pairs.
func auxvValue(auxv []byte, key uint64) (uint64, bool) {
	for i := 0; i+16 <= len(auxv); i += 16 {
		k := binary.NativeEndian.Uint64(auxv[i:])
		if k == 0 {
			break // AT_NULL
		}
		if k == key {
			return binary.NativeEndian.Uint64(auxv[i+8:]), true
		}
	}
	return 0, false
}

// WaitFor retries f every 100 ms until it succeeds or timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = f(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serverInfo reads INFO server, memory and persistence and the CONFIG
// values a reader needs to judge the numbers; a server that refuses a
// command just leaves its fields empty.
func (c *respConn) serverInfo() (results.ServerInfo, error) {
	var si results.ServerInfo
	srv, err := c.info("server")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	for _, k := range versionKeys {
		if v, ok := srv[k.key]; ok {
			si.Name, si.Version = k.name, v
			break
		}
	}
	if si.Name == "" {
		si.Name = "unknown (no *_version in INFO server)"
	}
	si.ProcessID = srv["process_id"]
	mem, err := c.info("memory")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	si.MaxMemory, si.MaxMemoryPolicy, si.UsedMemory = mem["maxmemory"], mem["maxmemory_policy"], mem["used_memory"]
	si.IOThreads = srv["io_threads_active"]
	if v, ok := c.configGet("io-threads"); ok {
		si.IOThreads = v
	}
	pers, err := c.info("persistence")
	if err != nil && !isRESPError(err) {
		return si, err
	}
	si.Persistence = persistence(pers, c)
	return si, nil
}

// persistence summarises whether the server writes its data: RDB
// snapshots (CONFIG GET save) and the append-only file.
func persistence(info map[string]string, c *respConn) string {
	var parts []string
	if v, ok := c.configGet("save"); ok {
		if v == "" {
			parts = append(parts, "no RDB snapshots (save \"\")")
		} else {
			parts = append(parts, fmt.Sprintf("RDB snapshots (save %q)", v))
		}
	}
	switch info["aof_enabled"] {
	case "1":
		parts = append(parts, "append-only file on")
	case "0":
		parts = append(parts, "append-only file off")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ")
}

// configGet returns one CONFIG GET value; ok is false when the server
// refuses the command or does not know the parameter.
func (c *respConn) configGet(name string) (string, bool) {
	v, err := c.Do("CONFIG", "GET", name)
	if err != nil {
		return "", false
	}
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		return "", false
	}
	s, ok := arr[1].(string)
	return s, ok
}

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

func isRESPError(err error) bool {
	var e errRESP
	return errors.As(err, &e)
}

// sampledHitCheck GETs a uniform random sample of the key space,
// pipelined, and counts misses (null bulk), values of the wrong length
// and error replies.
func sampledHitCheck(ctx context.Context, c *respConn, cfg plan.Config, rnd *rand.Rand) (results.SampleCheck, error) {
	return sampleGets(ctx, c, cfg, SampleKeys(cfg.DBSize, MinSampleKeys, rnd))
}

// sampleGets GETs keys on c, pipelined, and counts misses (null bulk),
// values of the wrong length and error replies.
func sampleGets(ctx context.Context, c *respConn, cfg plan.Config, keys []uint64) (results.SampleCheck, error) {
	start := time.Now()
	res := results.SampleCheck{Keys: int64(len(keys))}
	w := bufio.NewWriterSize(c.c, 64<<10)
	var req []byte
	key := make([]byte, 0, cfg.KeyLength)
	for lo := 0; lo < len(keys); lo += sampleBatch {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		batch := keys[lo:min(lo+sampleBatch, len(keys))]
		req = req[:0]
		for _, k := range batch {
			key = keyspace.AppendKey(key[:0], k, cfg.KeyLength)
			req = fmt.Appendf(req, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key)
		}
		c.c.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := w.Write(req); err != nil {
			return res, fmt.Errorf("orchestrator: sampled GET check on %s: send: %w", c.addr, err)
		}
		if err := w.Flush(); err != nil {
			return res, fmt.Errorf("orchestrator: sampled GET check on %s: send: %w", c.addr, err)
		}
		for _, k := range batch {
			v, err := ReadReply(c.r)
			bad := ""
			switch s, isString := v.(string); {
			case isRESPError(err):
				res.Errors++
				bad = "error reply: " + err.Error()
			case err != nil:
				return res, fmt.Errorf("orchestrator: sampled GET check on %s: %w", c.addr, err)
			case v == nil:
				res.Missed++
				bad = "null bulk: a miss"
			case !isString:
				res.Errors++
				bad = fmt.Sprintf("a %T reply", v)
			case len(s) != cfg.ValueLength:
				res.WrongLength++
				bad = fmt.Sprintf("a %d B value, want %d B", len(s), cfg.ValueLength)
			}
			if bad != "" && res.FirstBad == "" {
				res.FirstBad = fmt.Sprintf("key %s: %s", keyspace.AppendKey(nil, k, cfg.KeyLength), bad)
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// atClockTick is AT_CLKTCK, the auxiliary-vector entry from which the C
// library's sysconf(_SC_CLK_TCK) answers.
const atClockTick = 17

// defaultClockTicks is USER_HZ on every architecture Linux runs tierbench
// on (x86, arm64): /proc/<pid>/stat counts in it whatever CONFIG_HZ is.
const defaultClockTicks = 100

// versionKeys are the INFO server fields that name a server, most
// specific first: servers that speak RESP often also report a
// redis_version for clients that check it.
var versionKeys = []struct{ key, name string }{
	{"tierbench_version", "tierbench"}, {"garnet_version", "garnet"}, {"dragonfly_version", "dragonfly"},
	{"valkey_version", "valkey"}, {"keydb_version", "keydb"}, {"redis_version", "redis"},
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

// MinSampleKeys is the sampled hit check's size: a 0.1 % hole survives
// 20 000 uniform samples with probability 0.999^20000 ≈ 2·10⁻⁹.
const MinSampleKeys = 20_000

// sampleBatch is how many GETs of the sample are pipelined at once.
const sampleBatch = 512

// SampleKeys returns n distinct key indices drawn uniformly from
// [0, dbsize), or every index when dbsize ≤ n, in ascending order.
func SampleKeys(dbsize int64, n int, rnd *rand.Rand) []uint64 {
	if dbsize <= int64(n) {
		out := make([]uint64, dbsize)
		for i := range out {
			out[i] = uint64(i)
		}
		return out
	}
	// Floyd's algorithm: n draws, each distinct, uniform over subsets.
	seen := make(map[uint64]bool, n)
	out := make([]uint64, 0, n)
	for j := dbsize - int64(n); j < dbsize; j++ {
		k := uint64(rnd.Int64N(j + 1))
		if seen[k] {
			k = uint64(j)
		}
		seen[k] = true
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
