package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

func init() {
	register(command{name: "hostprobe", summary: "answer the orchestrator's questions about this host (run in its containers)", run: runHostProbe, hidden: true})
}

func runHostProbe(args []string, stdout, stderr io.Writer) int {
	var req rig.ProbeRequest
	fs := flag.NewFlagSet("hostprobe", flag.ContinueOnError)
	fs.IntVar(&req.PID, "pid", 0, "print read_bytes of /proc/`pid`/io and the placement in its status")
	fs.StringVar(&req.Wipe, "wipe", "", "empty this `directory`")
	fs.StringVar(&req.Addr, "addr", "", "send --resp to the RESP server at `host:port`")
	resp := fs.String("resp", "", "with --addr: the `command` to send, words separated by spaces (PING, DBSIZE, INFO store)")
	readAuthFile := passwordFlags(fs, &req.Auth, "with --addr: the server's `password`")
	fs.StringVar(&req.TLSDir, "tls-dir", "", "with --addr: dial it over TLS with the run's files in this `directory` (ca.crt, client.crt, client.key)")
	fs.BoolVar(&req.Prove, "prove", false, "with --addr and --pid: prove that pid owns the listening socket of --addr")
	fs.BoolVar(&req.Witness, "witness", false, "with --addr: read DBSIZE, INFO store and INFO server")
	sample := fs.String("sample", "", "with --addr: the sampled GET check of a load of `dbsize,keylength,valuelength`")
	fs.StringVar(&req.DataDisks, "data-disks", "", "print the physical disks below this `directory`")
	disks := fs.String("diskstats", "", "print the summed /proc/diskstats counters of these comma-separated `disks`")
	fs.BoolVar(&req.CPUStat, "cpustat", false, "print this host's /proc/stat CPU time counters, every CPU's and each CPU's")
	fs.BoolVar(&req.Addrs, "addrs", false, "print this host's global unicast addresses")
	fs.StringVar(&req.RouteTo, "route-to", "", "print this host's source address towards this `IP`")
	fs.StringVar(&req.FreeOn, "free-port-on", "", "print a TCP port free on this `address`")
	hold := fs.Bool("hold", false, "read standard input until it closes, then exit: the run's lease container on an engine, which exits when the run that attached to it is gone")
	holdData := fs.String("hold-data", "", "with --hold: flock this data `directory` and mark it with --run-id and --run-pid until standard input closes; print \"held\" once it is held, or exit 3 naming the run that holds it")
	runID := fs.String("run-id", "", "with --hold-data: the `id` of the run that holds the directory")
	runPID := fs.Int("run-pid", 0, "with --hold-data: the `pid` of that run on its own machine")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench hostprobe [flags]

hostprobe is what tierbench run executes inside its containers on each
host it drives through a Docker engine, so that a remote server's
/proc/<pid>/io and placement, the host's addresses and its data dir are
read where they are. It prints one JSON document.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if err := readAuthFile(); err != nil {
		fmt.Fprintf(stderr, "tierbench hostprobe: %v\n", err)
		return 2
	}
	if *hold && *holdData != "" {
		if err := docker.HoldData(*holdData, *runID, *runPID, os.Stdin, stdout); err != nil {
			fmt.Fprintf(stdout, "tierbench hostprobe: %v\n", err)
			return rig.ProbeRefused
		}
		return 0
	}
	if *hold {
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	req.Command = strings.Fields(*resp)
	if *disks != "" {
		req.DiskStats = strings.Split(*disks, ",")
	}
	if *sample != "" {
		var s rig.SampleRequest
		if _, err := fmt.Sscanf(*sample, "%d,%d,%d", &s.DBSize, &s.KeyLength, &s.ValueLength); err != nil {
			fmt.Fprintf(stderr, "tierbench hostprobe: --sample %q: want dbsize,keylength,valuelength\n", *sample)
			return 2
		}
		req.Sample = &s
	}
	if err := rig.Probe(context.Background(), req, stdout); err != nil {
		fmt.Fprintf(stderr, "tierbench hostprobe: %v\n", err)
		if errors.Is(err, safe.ErrForeignData) {
			return rig.ProbeRefused
		}
		return 1
	}
	return 0
}
