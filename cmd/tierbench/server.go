package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/server"
)

func init() {
	register(command{name: "server", summary: "run the tiered RESP server", run: runServer})
}

func runServer(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var cfg server.Config
	fs.IntVar(&cfg.Port, "port", server.DefaultPort, "TCP `port` to listen on; 0 turns the plain listener off (with --tls-port)")
	var tc server.TLSConfig
	fs.IntVar(&tc.Port, "tls-port", 0, "TLS `port` to listen on as well (0: no TLS); needs --tls-cert-file and --tls-key-file")
	fs.StringVar(&tc.CertFile, "tls-cert-file", "", "the server's certificate `file` (PEM)")
	fs.StringVar(&tc.KeyFile, "tls-key-file", "", "the server's private key `file` (PEM)")
	fs.StringVar(&tc.CAFile, "tls-ca-cert-file", "", "CA certificates `file` (PEM) that client certificates must be signed by (needed unless --tls-auth-clients no)")
	fs.StringVar(&tc.AuthClients, "tls-auth-clients", "yes", "client certificates: yes (required), optional (checked when given) or no (Redis's tls-auth-clients)")
	fs.Func("user", "an ACL `user` in Redis's rule spelling, e.g. \"alice on >secret ~* &* +@all\" (repeatable);\nits password is on the command line, where ps shows it: prefer --aclfile", func(v string) error {
		cfg.Users = append(cfg.Users, v)
		return nil
	})
	aclFile := fs.String("aclfile", "", "ACL users from this `file`, in Redis's aclfile format: one \"user alice on >secret ~* &* +@all\" a line\n(rules: on, off, nopass, >password, #sha256-hex, ~*, &*, +@all; the file must be private: chmod 600)")
	fs.StringVar(&cfg.Bind, "bind", "127.0.0.1", "`address` to listen on")
	readAuthFile := passwordFlags(fs, &cfg.Auth, "`password` clients must give with AUTH before other commands (empty: no authentication);\non the command line, where ps shows it: prefer --requirepass-file")
	requirepassFile := fs.String("requirepass-file", "", "the default user's password, the first line of this `file` (Redis's requirepass), kept off\nthe command line; the file must be a regular file that group and others cannot read (chmod 600)")
	fs.BoolVar(&cfg.ScatterGatherGet, "sg-get", true, "submit the device reads of all GETs of a pipelined batch together and wait once;\nfalse waits for each GET's read on its own")
	fs.IntVar(&cfg.MaxClients, "maxclients", server.DefaultMaxClients, "most `connections` served at once; one more is answered \"-ERR max number of clients reached\" and closed (Redis's maxclients)")
	queryLimit := fs.String("client-query-buffer-limit", size.Format(server.DefaultMaxQueryBytes), "largest `size` one connection may buffer of requests not yet answered (k, m, g suffixes; Redis's\nclient-query-buffer-limit): a request that needs more is refused with an error and the connection closed;\na single bulk may be up to 512m (proto-max-bulk-len)")
	fs.IntVar(&cfg.TimeoutSeconds, "timeout", 0, "close a client idle this many `seconds`: sending nothing, or taking no replies (Redis's timeout; 0: never)")
	handshakeSeconds := fs.Int("tls-handshake-timeout", int(server.DefaultTLSHandshakeTimeout/time.Second), "close a TLS connection whose handshake is not done within this many `seconds`, whatever --timeout says")
	authSeconds := fs.Int("auth-timeout", int(server.DefaultAuthTimeout/time.Second), "with a password, close a connection not authenticated within this many `seconds` of connecting")
	fs.StringVar(&cfg.ClientOutputBufferLimit, "client-output-buffer-limit", server.DefaultClientOutputBufferLimit, "`class hard soft seconds`, as in redis.conf: close a client whose unsent replies pass hard,\nor stay at soft or more for seconds (0 disables a limit; k, kb, m, mb, g, gb units); only the normal class applies")
	pendingReads := fs.String("max-pending-read-bytes", size.Format(server.DefaultMaxPendingReadBytes), "most `bytes` of device reads one connection has in flight, with the replies they gathered\nbefore they are written (k, m, g suffixes); reads beyond it wait, none is refused")
	clusterNodes := fs.String("cluster-nodes", "", "static cluster: the node `file` every node of the cluster shares, one master a line: ID HOST:PORT A-B[,C-D]")
	clusterID := fs.String("cluster-node-id", "", "static cluster: this node's `ID` in --cluster-nodes")
	clusterSlots := fs.String("cluster-slots", "", "static cluster: the `slots` this node serves, A-B[,C-D]; must match its line in --cluster-nodes (default: that line)")
	clusterAnnounce := fs.String("cluster-announce", "", "static cluster: the `HOST:PORT` clients reach this node at, as -MOVED and CLUSTER SLOTS name it; must match its line in --cluster-nodes (default: that line)")
	storeConfig := bindStoreFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench server [flags]

Serves RESP2 (the Redis protocol) on a hybrid-log store. Without
--storage-tier the store lives in memory; with it the log keeps only
--memory bytes in memory and older records on the device under --logdir,
so GETs of them become device reads (all GETs of one pipelined batch are
submitted together with --sg-get). redis-cli, redis-benchmark and Redis
client libraries work against it. It stops on SIGTERM, SIGINT or SHUTDOWN.

With --cluster-nodes and --cluster-node-id it is one master of a static
cluster (no gossip, no failover, no migration): it serves only its slots,
answers CLUSTER SHARDS, SLOTS, NODES, MYID, KEYSLOT and INFO from the node
file, and answers a key of another node's slot with -MOVED slot host:port
and a command whose keys span slots with -CROSSSLOT, as Redis Cluster does;
redis-cli -c and cluster clients follow. tierbench run --shards starts
such clusters itself.

With --tls-port it serves TLS as well, as redis-server does with the same
flags (--port 0 leaves TLS alone); with --aclfile (or --user), named ACL
users log in with AUTH user password or HELLO 2 AUTH user password.
Passwords belong in files (--requirepass-file, --aclfile), not on the
command line: see docs/security-server.md.
`+wrapWords("Commands: ", server.CommandNames(), 72)+`
Example (100 M x 128 B records tiered onto a disk, as the reference runs):
  tierbench server --port 6379 --bind 127.0.0.1 --memory 16m --page 4m \
    --segment 1g --index 8g --storage-tier --logdir /var/tmp/tierbench \
    --device-type native --device-io-backend libaio

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if flagGiven(fs, "auth") || slices.ContainsFunc(cfg.Users, ruleHasPassword) {
		fmt.Fprintln(stderr, "tierbench server: WARNING: a password on the command line is shown to every user of this host (ps, /proc/PID/cmdline): --requirepass-file and --aclfile keep it off")
	}
	if err := readAuthFile(); err != nil {
		fmt.Fprintf(stderr, "tierbench server: %v\n", err)
		return 2
	}
	if err := readServerSecrets(&cfg, *requirepassFile, *aclFile); err != nil {
		fmt.Fprintf(stderr, "tierbench server: %v\n", err)
		return 2
	}
	sc, err := storeConfig()
	if err != nil {
		fmt.Fprintf(stderr, "tierbench server: %v\n", err)
		return 2
	}
	cfg.Store = sc
	if cfg.MaxClients <= 0 {
		fmt.Fprintf(stderr, "tierbench server: --maxclients %d: want at least 1\n\n", cfg.MaxClients)
		fs.Usage()
		return 2
	}
	if n, err := size.Parse(*queryLimit); err != nil || n < 1<<20 || n > 1<<32-1 {
		fmt.Fprintf(stderr, "tierbench server: --client-query-buffer-limit %q: want a size from 1m to 4g (%v)\n\n", *queryLimit, err)
		fs.Usage()
		return 2
	} else {
		cfg.MaxQueryBytes = int(n)
	}
	if n, err := size.Parse(*pendingReads); err != nil || n < 1<<20 {
		fmt.Fprintf(stderr, "tierbench server: --max-pending-read-bytes %q: want a size of at least 1m (%v)\n\n", *pendingReads, err)
		fs.Usage()
		return 2
	} else {
		cfg.MaxPendingReadBytes = n
	}
	if err := server.CheckClientOutputBufferLimit(cfg.ClientOutputBufferLimit); err != nil {
		fmt.Fprintf(stderr, "tierbench server: --%s\n\n", strings.TrimPrefix(err.Error(), "server: "))
		fs.Usage()
		return 2
	}
	if cfg.TimeoutSeconds < 0 {
		fmt.Fprintf(stderr, "tierbench server: --timeout %d: want 0 (never) or more seconds\n\n", cfg.TimeoutSeconds)
		fs.Usage()
		return 2
	}
	for _, f := range []struct {
		name    string
		seconds int
		set     *time.Duration
	}{
		{"tls-handshake-timeout", *handshakeSeconds, &cfg.TLSHandshakeTimeout},
		{"auth-timeout", *authSeconds, &cfg.AuthTimeout},
	} {
		if f.seconds < 1 {
			fmt.Fprintf(stderr, "tierbench server: --%s %d: want at least 1 second: a connection must not be held for ever\n\n", f.name, f.seconds)
			fs.Usage()
			return 2
		}
		*f.set = time.Duration(f.seconds) * time.Second
	}
	if err := server.CheckUsers(cfg.Auth, cfg.Users); err != nil {
		fmt.Fprintf(stderr, "tierbench server: %s: %v\n\n", usersFlag(*aclFile), strings.TrimPrefix(err.Error(), "server: "))
		fs.Usage()
		return 2
	}
	if tc.Port < 0 || tc.Port > 65535 {
		fmt.Fprintf(stderr, "tierbench server: --tls-port %d out of range 0-65535\n\n", tc.Port)
		fs.Usage()
		return 2
	}
	if !slices.Contains(server.AuthClientsValues, tc.AuthClients) {
		fmt.Fprintf(stderr, "tierbench server: --tls-auth-clients %q: want yes, no or optional\n\n", tc.AuthClients)
		fs.Usage()
		return 2
	}
	if tc.Port > 0 {
		cfg.TLS = &tc
	} else if tc.CertFile != "" || tc.KeyFile != "" || tc.CAFile != "" {
		fmt.Fprintf(stderr, "tierbench server: --tls-cert-file, --tls-key-file and --tls-ca-cert-file need --tls-port\n\n")
		fs.Usage()
		return 2
	}
	if cfg.Port == 0 {
		if cfg.TLS == nil {
			fmt.Fprintf(stderr, "tierbench server: --port 0 without --tls-port: nothing to listen on\n\n")
			fs.Usage()
			return 2
		}
		cfg.NoPlain = true
	}
	if *clusterNodes != "" || *clusterID != "" || *clusterSlots != "" || *clusterAnnounce != "" {
		if cfg.Cluster, err = server.LoadClusterConfig(*clusterNodes, *clusterID, *clusterAnnounce, *clusterSlots); err != nil {
			fmt.Fprintf(stderr, "tierbench server: %v\n\n", strings.TrimPrefix(err.Error(), "server: "))
			fs.Usage()
			return 2
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, cfg, logger); err != nil {
		fmt.Fprintf(stderr, "tierbench server: %v\n", strings.TrimPrefix(err.Error(), "server: "))
		return 1
	}
	return 0
}

// readServerSecrets sets the default user's password from
// requirepassFile and the ACL users from aclFile, when given: each must be
// the only source of what it sets.
func readServerSecrets(cfg *server.Config, requirepassFile, aclFile string) error {
	if requirepassFile != "" {
		if cfg.Auth != "" {
			return fmt.Errorf("--requirepass-file and --auth (or --auth-file) both give the default user's password: give one")
		}
		pw, err := server.ReadPasswordFile(requirepassFile)
		if err != nil {
			return fmt.Errorf("--requirepass-file: %w", err)
		}
		cfg.Auth = pw
	}
	if aclFile != "" {
		if len(cfg.Users) > 0 {
			return fmt.Errorf("--aclfile and --user both give ACL users: put them all in the file")
		}
		users, err := server.LoadACLFile(aclFile)
		if err != nil {
			return fmt.Errorf("--aclfile: %w", err)
		}
		cfg.Users = users
	}
	return nil
}

// usersFlag names the flag the ACL users came from, for errors.
func usersFlag(aclFile string) string {
	if aclFile != "" {
		return "--aclfile " + aclFile
	}
	return "--user"
}

// wrapWords joins words after prefix into lines of at most width bytes.
func wrapWords(prefix string, words []string, width int) string {
	var b strings.Builder
	line := prefix
	for i, w := range words {
		sep := " "
		if i == len(words)-1 {
			w += "."
		}
		if line == prefix {
			sep = ""
		}
		if len(line)+len(sep)+len(w) > width {
			b.WriteString(line + "\n")
			line, sep = "  ", ""
		}
		line += sep + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// ruleHasPassword reports whether an ACL user rule ("alice on >secret …")
// holds a password in clear (">secret"; "#hash" is not one).
func ruleHasPassword(rule string) bool {
	return slices.ContainsFunc(strings.Fields(rule), func(w string) bool { return strings.HasPrefix(w, ">") })
}
