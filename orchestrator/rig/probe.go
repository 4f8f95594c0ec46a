package rig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// ProbeRequest is what one `tierbench hostprobe` answers. The command runs
// in a container on a host the orchestrator drives through its Docker
// engine, so that every question about that host — its server's /proc,
// its addresses, its data dir — is answered there and not on the machine
// the orchestrator runs on. Each field set asks one question.
type ProbeRequest struct {
	PID  int    // /proc/<pid>/io read_bytes and /proc/<pid>/status placement
	Wipe string // empty this directory
	Addr string // a RESP server to send Command to
	Auth string // its password
	// TLSDir is the directory of the run's TLS files (CA, client
	// certificate and key): with it the server at Addr is dialled over TLS.
	TLSDir  string
	Command []string // e.g. PING, DBSIZE, INFO store
	Addrs   bool     // this host's global unicast addresses
	RouteTo string   // this host's source address towards that IP
	FreeOn  string   // a TCP port free on this address
	// With Addr: Prove checks that PID owns its listening socket,
	// Witness reads its key count and INFO, Sample runs the sampled GET
	// check of the load.
	Prove   bool
	Witness bool
	Sample  *SampleRequest
	// DataDisks names the physical disks below this directory;
	// DiskStats samples these disks' /proc/diskstats counters.
	DataDisks string
	DiskStats []string
	// CPUStat reads this host's /proc/stat CPU time counters.
	CPUStat bool
}

// SampleRequest is the dataset a sampled GET check reads.
type SampleRequest struct {
	DBSize                 int64
	KeyLength, ValueLength int
}

// ProbeRefused is hostprobe's exit status when it refused to wipe a data
// dir holding files tierbench did not make (ErrForeignData).
const ProbeRefused = 3

// ProbeAnswer is hostprobe's JSON document.
type ProbeAnswer struct {
	ReadBytes *int64               `json:"read_bytes,omitempty"`
	Placement *results.Placement   `json:"placement,omitempty"`
	Wiped     string               `json:"wiped,omitempty"`
	Reply     any                  `json:"reply,omitempty"`
	Addrs     []string             `json:"addrs,omitempty"`
	Source    string               `json:"source,omitempty"`
	FreePort  int                  `json:"free_port,omitempty"`
	Proof     *results.OwnerProof  `json:"proof,omitempty"`
	Witness   *ServerWitness       `json:"witness,omitempty"`
	Sample    *results.SampleCheck `json:"sample,omitempty"`
	CPUTicks  *uint64              `json:"cpu_ticks,omitempty"` // of --pid: utime + stime
	// CPUSystemTicks is --pid's stime, the kernel's part of CPUTicks.
	CPUSystemTicks *uint64           `json:"cpu_system_ticks,omitempty"`
	DataDisks      []string          `json:"data_disks,omitempty"`
	DiskStats      *diskstats.Sample `json:"diskstats,omitempty"`
	CPUStat        *cpustat.Sample   `json:"cpustat,omitempty"`
}

// Probe answers req on this host and prints the answer as one JSON
// document; the first question that cannot be answered is the error.
func Probe(ctx context.Context, req ProbeRequest, stdout io.Writer) error {
	var a ProbeAnswer
	proc := ProcRoot("/proc")
	acc, err := tlsDirAccess(req.TLSDir, "", req.Auth)
	if err != nil {
		return err
	}
	if req.Prove {
		proof, err := proc.ProveServer(ctx, acc, req.Addr, req.PID)
		if err != nil {
			return err
		}
		a.Proof = &proof
	}
	if req.Witness {
		w, err := readWitness(ctx, req.Addr, acc)
		if err != nil {
			return err
		}
		a.Witness = &w
	}
	if req.Sample != nil {
		s, err := runSample(ctx, req.Addr, acc, plan.Config{Workload: results.Workload{DBSize: req.Sample.DBSize, KeyLength: req.Sample.KeyLength, ValueLength: req.Sample.ValueLength}})
		if err != nil {
			return err
		}
		a.Sample = &s
	}
	if req.PID > 0 && !req.Prove {
		n, err := proc.ReadBytes(req.PID)
		if err != nil {
			return err
		}
		pl, err := proc.Placement(req.PID)
		if err != nil {
			return err
		}
		ticks, err := proc.CPUTicks(req.PID)
		if err != nil {
			return err
		}
		total := ticks.Total()
		a.ReadBytes, a.Placement, a.CPUTicks, a.CPUSystemTicks = &n, &pl, &total, &ticks.System
	}
	if req.DataDisks != "" {
		disks, err := hostcheck.DataDisks(req.DataDisks)
		if err != nil {
			return err
		}
		a.DataDisks = disks
	}
	if len(req.DiskStats) > 0 {
		s, err := diskstats.Read("/", req.DiskStats)
		if err != nil {
			return err
		}
		a.DiskStats = &s
	}
	if req.CPUStat {
		s, err := cpustat.Read("/")
		if err != nil {
			return err
		}
		a.CPUStat = &s
	}
	if req.Wipe != "" {
		if err := safe.WipeDir(req.Wipe); err != nil {
			return err
		}
		a.Wiped = req.Wipe
	}
	if req.Addr == "" && (len(req.Command) > 0 || req.Prove || req.Witness || req.Sample != nil) {
		return fmt.Errorf("orchestrator: hostprobe: --resp, --prove, --witness and --sample need --addr")
	}
	if req.Addr != "" && len(req.Command) > 0 {
		v, err := probeRESP(ctx, req.Addr, acc, req.Command)
		if err != nil {
			return err
		}
		a.Reply = v
	}
	if req.Addrs {
		addrs, err := globalAddrs()
		if err != nil {
			return err
		}
		a.Addrs = addrs
	}
	if req.RouteTo != "" {
		src, err := sourceAddr(req.RouteTo)
		if err != nil {
			return err
		}
		a.Source = src
	}
	if req.FreeOn != "" {
		l, err := net.Listen("tcp", net.JoinHostPort(req.FreeOn, "0"))
		if err != nil {
			return fmt.Errorf("orchestrator: hostprobe: find a free port on %s: %w", req.FreeOn, err)
		}
		a.FreePort = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	return json.NewEncoder(stdout).Encode(a)
}

func probeRESP(ctx context.Context, addr string, acc Access, cmd []string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := acc.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd...)
}

// globalAddrs lists the host's addresses other than loopback and
// link-local ones, IPv4 first.
func globalAddrs() ([]string, error) {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("orchestrator: hostprobe: list addresses: %w", err)
	}
	var v4, v6 []string
	for _, a := range ifs {
		ipn, ok := a.(*net.IPNet)
		if !ok || !ipn.IP.IsGlobalUnicast() {
			continue
		}
		if ipn.IP.To4() != nil {
			v4 = append(v4, ipn.IP.String())
		} else {
			v6 = append(v6, ipn.IP.String())
		}
	}
	return append(v4, v6...), nil
}

// sourceAddr is the address this host sends from towards ip: a UDP
// "connect" picks the route and sends nothing.
func sourceAddr(ip string) (string, error) {
	if net.ParseIP(ip) == nil {
		return "", fmt.Errorf("orchestrator: hostprobe: --route-to %q is not an IP address", ip)
	}
	c, err := net.Dial("udp", net.JoinHostPort(ip, "9"))
	if err != nil {
		return "", fmt.Errorf("orchestrator: hostprobe: no route to %s: %w", ip, err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// ProbeArgs is the hostprobe command line for req, the inverse of the
// flags cmd/tierbench parses.
func ProbeArgs(req ProbeRequest) []string {
	var pid, sample string
	if req.PID > 0 {
		pid = strconv.Itoa(req.PID)
	}
	if s := req.Sample; s != nil {
		sample = fmt.Sprintf("%d,%d,%d", s.DBSize, s.KeyLength, s.ValueLength)
	}
	auth := ""
	if req.Addr != "" && req.Auth != "" {
		// A password goes only to a server, and never on the command
		// line: the container holds it in a file (dockerDriver.password).
		auth = ContainerPasswordFile
	}
	tlsDir := ""
	if req.Addr != "" {
		tlsDir = req.TLSDir
	}
	args := []string{"hostprobe"}
	for _, f := range []struct {
		name, value string
		on          bool
	}{
		{name: "--pid", value: pid}, {name: "--wipe", value: req.Wipe},
		{name: "--addr", value: req.Addr}, {name: "--auth-file", value: auth}, {name: "--tls-dir", value: tlsDir},
		{name: "--resp", value: strings.Join(req.Command, " ")},
		{name: "--prove", on: req.Prove}, {name: "--witness", on: req.Witness}, {name: "--sample", value: sample},
		{name: "--addrs", on: req.Addrs}, {name: "--route-to", value: req.RouteTo}, {name: "--free-port-on", value: req.FreeOn},
		{name: "--data-disks", value: req.DataDisks}, {name: "--diskstats", value: strings.Join(req.DiskStats, ",")},
		{name: "--cpustat", on: req.CPUStat},
	} {
		switch {
		case f.value != "":
			args = append(args, f.name, f.value)
		case f.on:
			args = append(args, f.name)
		}
	}
	return args
}

func ParseProbe(out []byte) (ProbeAnswer, error) {
	var a ProbeAnswer
	doc, err := JSONDocument(out)
	if err == nil {
		err = json.Unmarshal(doc, &a)
	}
	if err != nil {
		return a, fmt.Errorf("orchestrator: hostprobe output: %w: %q", err, Clip(out))
	}
	return a, nil
}

// JSONDocument returns the text from the first '{' to the end: a
// subcommand's JSON is its last output, warnings may come before it.
func JSONDocument(out []byte) ([]byte, error) {
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
