package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/tlsrow"
	"github.com/tierbench/tierbench/results"
)

// TestTLSConfig: --tls is refused where the run cannot give it, with a
// sentence that says why; --server-addr's URL forms leave HOST:PORT, a
// user and TLS, and the password nowhere but in memory.
func TestTLSConfig(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		name string
		cfg  plan.Config
		want string
	}{
		{"a mode that is not one", plan.Config{Workload: results.Workload{TLS: "yes"}}, `--tls "yes": want on, off or both`},
		{"both against one port", plan.Config{Workload: results.Workload{TLS: tlsrow.Both, ServerAddr: "127.0.0.1:6379"}}, "--tls both with --server-addr"},
		{"on against a plain address", plan.Config{Workload: results.Workload{TLS: tlsrow.On, ServerAddr: "127.0.0.1:6379"}}, "give the server's TLS address as rediss://"},
		{"a CA for the run's own", plan.Config{Workload: results.Workload{CACert: "/ca.pem"}}, "--cacert and --insecure apply to --server-addr rediss://"},
		{"shards", plan.Config{Workload: results.Workload{TLS: tlsrow.On, Shards: []int{2}, DBSize: 20_000_000}}, "--tls on with --shards above 1 is not supported"},
		{"a foreign server", plan.Config{Workload: results.Workload{TLS: tlsrow.Both, Servers: []string{"redis"}, Scenario: results.ScenarioMemory}}, "--tls both measures tierbench's own server"},
		{"the ladder asked for", plan.Config{Workload: results.Workload{TLS: tlsrow.On, Ladder: true, Given: []string{"ladder"}}}, "--tls on with --ladder is not supported"},
		{"another scheme", plan.Config{Workload: results.Workload{ServerAddr: "http://127.0.0.1:6379"}}, "want redis:// or rediss://"},
		{"no port", plan.Config{Workload: results.Workload{ServerAddr: "rediss://alice@cache.example.com", AuthEnv: "PATH"}}, "give the port"},
		{"a password in the address", plan.Config{Workload: results.Workload{ServerAddr: "rediss://alice:s3cret@cache.example.com:6380"}}, "give rediss://alice@cache.example.com:6380 with the password in a file of yours, --auth-file FILE"},
		{"a user without a password", plan.Config{Workload: results.Workload{ServerAddr: "redis://alice@127.0.0.1:6379"}}, "give its password with --auth-file FILE or --auth-env NAME"},
		{"a password for no server", plan.Config{Workload: results.Workload{AuthEnv: "PATH"}}, "give the password of the server at --server-addr"},
		{"two passwords", plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", AuthEnv: "PATH", AuthFile: "/etc/hostname"}}, "both give a password"},
		{"an empty variable", plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", AuthEnv: "TIERBENCH_NO_SUCH_VARIABLE"}}, "has no TIERBENCH_NO_SUCH_VARIABLE"},
	} {
		_, err := tc.cfg.Resolve(none, parts)
		if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a configuration error saying %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error %q shows the password", tc.name, err)
		}
	}

	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("s3cret\nsecond line\n"), 0o600)
	t.Setenv("TIERBENCH_TEST_PW", "s3cret")
	for _, tc := range []struct {
		addr, authFile, authEnv          string
		wantAddr, wantUser, wantPassword string
		wantTLS                          bool
	}{
		{"127.0.0.1:6379", "", "", "127.0.0.1:6379", "", "", false},
		{"rediss://alice@127.0.0.1:6380", pwFile, "", "127.0.0.1:6380", "alice", "s3cret", true},
		{"redis://127.0.0.1:6379", "", "TIERBENCH_TEST_PW", "127.0.0.1:6379", "", "s3cret", false},
		{"rediss://127.0.0.1:6380", "", "", "127.0.0.1:6380", "", "", true},
	} {
		got, err := plan.Config{Workload: results.Workload{
			ServerAddr: tc.addr,
			AuthFile:   tc.authFile,
			AuthEnv:    tc.authEnv,
			DBSize:     1000,
		},
		}.Resolve(none, parts)
		if err != nil {
			t.Errorf("--server-addr %s: %v", tc.addr, err)
			continue
		}
		if got.ServerAddr != tc.wantAddr || got.ServerUser != tc.wantUser || got.ServerPassword != tc.wantPassword || got.ServerTLS != tc.wantTLS {
			t.Errorf("--server-addr %s: got %s, user %q, password %q, TLS %v; want %s, %q, %q, %v", tc.addr, got.ServerAddr, got.ServerUser, got.ServerPassword, got.ServerTLS, tc.wantAddr, tc.wantUser, tc.wantPassword, tc.wantTLS)
		}
		if w := got.Record(); strings.Contains(w.ServerAddr+w.ServerUser, "s3cret") {
			t.Errorf("--server-addr %s: the plan records the password: %+v", tc.addr, w)
		}
	}
}
