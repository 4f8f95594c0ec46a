package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

// infoSections are INFO's sections in the order "INFO" with no argument
// prints them.
var infoSections = []string{"server", "clients", "memory", "stats", "replication", "cpu", "store", "keyspace", "latencystats"}

func cmdInfo(c *conn, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	for _, a := range args[1:] {
		switch s := strings.ToLower(string(a)); s {
		case "all", "everything", "default":
			for _, s := range infoSections {
				want[s] = true
			}
		default:
			want[s] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.srv.writeInfoSection(&b, sec)
	}
	c.out = appendBulkString(c.out, b.String())
}

// writeInfoSection writes one "# Title" block of "name:value" lines.
func (s *Server) writeInfoSection(b *strings.Builder, section string) {
	line := func(name string, value any) { fmt.Fprintf(b, "%s:%v\r\n", name, value) }
	st := s.st.Stats()
	switch section {
	case "server":
		b.WriteString("# Server\r\n")
		line("redis_version", redisCompatVersion)
		line("tierbench_version", buildVersion())
		line("redis_mode", "standalone")
		line("os", runtime.GOOS+" "+runtime.GOARCH)
		line("arch_bits", 64)
		line("go_version", runtime.Version())
		line("process_id", os.Getpid())
		line("tcp_port", s.port())
		line("uptime_in_seconds", int64(time.Since(s.start).Seconds()))
		line("sg_get", boolInt(s.cfg.ScatterGatherGet))
	case "clients":
		b.WriteString("# Clients\r\n")
		line("connected_clients", s.stats.connected.Load())
		line("maxclients", s.cfg.MaxClients)
		line("client_recent_max_input_buffer", s.stats.maxInputBuffer.Load())
		line("client_recent_max_output_buffer", s.stats.maxOutputBuffer.Load())
	case "memory":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.WriteString("# Memory\r\n")
		line("used_memory", m.HeapAlloc)
		line("used_memory_sys", m.Sys)
		line("maxmemory", 0)
		line("maxmemory_policy", "noeviction")
		ec := s.st.Config()
		line("store_memory_bytes", storeMemoryBytes(ec, st))
		line("store_index_bytes", ec.IndexBytes)
	case "stats":
		b.WriteString("# Stats\r\n")
		line("total_connections_received", s.stats.connectionsReceived.Load())
		line("total_commands_processed", s.stats.commands.Load())
		line("total_net_input_bytes", s.stats.readBytes.Load())
		line("total_net_output_bytes", s.stats.writtenBytes.Load())
		line("rejected_connections", s.stats.refused.Load())
		line("protocol_errors", s.stats.rejected.Load())
		line("client_query_buffer_limit_disconnections", s.stats.queryLimitClosed.Load())
		line("client_output_buffer_limit_disconnections", s.stats.outputLimitClosed.Load())
		line("tls_handshakes_failed", s.stats.handshakesFailed.Load())
		line("tls_handshakes_dropped", s.stats.handshakesDropped.Load())
		line("unauthenticated_timeout_disconnections", s.stats.authTimeoutClosed.Load())
		line("expired_keys", st.ExpiredKeys)
		line("keyspace_hits", s.stats.hits.Load())
		line("keyspace_misses", s.stats.misses.Load())
		line("device_gets", s.stats.deviceGets.Load())
	case "replication":
		// A lone master, in Redis's words.
		b.WriteString("# Replication\r\n")
		line("role", "master")
		line("connected_slaves", 0)
		line("master_failover_state", "no-failover")
		line("master_replid", s.replID)
		line("master_replid2", strings.Repeat("0", 40))
		line("master_repl_offset", 0)
		line("second_repl_offset", -1)
		line("repl_backlog_active", 0)
		line("repl_backlog_size", 0)
		line("repl_backlog_first_byte_offset", 0)
		line("repl_backlog_histlen", 0)
	case "cpu":
		b.WriteString("# CPU\r\n")
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		seconds := func(tv syscall.Timeval) string { return fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec) }
		line("used_cpu_sys", seconds(self.Stime))
		line("used_cpu_user", seconds(self.Utime))
		line("used_cpu_sys_children", seconds(children.Stime))
		line("used_cpu_user_children", seconds(children.Utime))
	case "store":
		b.WriteString("# Store\r\n")
		line("Log.BeginAddress", st.BeginAddress)
		line("Log.HeadAddress", st.HeadAddress)
		line("Log.ReadOnlyAddress", st.ReadOnlyAddress)
		line("Log.TailAddress", st.TailAddress)
		line("Log.FlushedAddress", st.FlushedAddress)
		line("Index.Buckets", st.IndexBuckets)
		line("Index.OverflowBuckets", st.OverflowBuckets)
		line("Device.PendingReads", st.PendingReads)
		line("Device.CompletedReads", st.CompletedReads)
		line("Device.Type", st.DeviceType)
		line("Device.Backend", st.Backend)
		line("Device.SectorSize", st.SectorSize)
		line("Store.Tiered", boolInt(s.cfg.Store.StorageTier))
		line("Store.Keys", st.Keys)
		line("Store.Collections", s.colls.n.Load())
		rc := st.ReadCache
		line("ReadCache.Memory", s.st.Config().ReadCacheBytes)
		line("ReadCache.Bytes", rc.Bytes)
		line("ReadCache.RecordBytes", rc.RecordBytes)
		line("ReadCache.Records", rc.Records)
		line("ReadCache.Hits", rc.Hits)
		line("ReadCache.Misses", rc.Misses)
		line("ReadCache.Admissions", rc.Admissions)
		line("ReadCache.Evictions", rc.Evictions)
		line("ReadCache.Invalidations", rc.Invalidations)
		line("ReadCache.Refusals", rc.Refusals)
	case "latencystats":
		s.writeLatencyStats(b)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		// avg_ttl stays 0: Redis estimates it from the keys its active
		// expiry samples, which the store's schedule does not mirror.
		fmt.Fprintf(b, "db0:keys=%d,expires=%d,avg_ttl=0\r\n", s.keys(), st.ExpiringKeys)
	}
}

// storeMemoryBytes is the memory the log takes: tiered, its fixed
// in-memory part; in memory, the pages allocated so far (the log grows a
// page at a time up to its tail and never gives pages back).
func storeMemoryBytes(cfg store.Config, st store.Stats) int64 {
	if cfg.StorageTier || cfg.PageBytes <= 0 {
		return cfg.MemoryBytes
	}
	page := uint64(cfg.PageBytes)
	return int64((st.TailAddress/page + 1) * page)
}

// keys is DBSIZE: the store's strings and the in-memory collections.
func (s *Server) keys() int64 { return s.st.Stats().Keys + s.colls.n.Load() }

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// buildVersion is the VCS revision the binary was built from.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return info.Main.Version
}
