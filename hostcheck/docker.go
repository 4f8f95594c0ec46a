package hostcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// DockerInfo is what preflight records about the Docker engine.
type DockerInfo struct {
	Host          string   `json:"host"` // the DOCKER_HOST the client used
	Version       string   `json:"version"`
	APIVersion    string   `json:"api_version"`
	StorageDriver string   `json:"storage_driver"`
	CgroupVersion string   `json:"cgroup_version"`
	CgroupDriver  string   `json:"cgroup_driver"`
	SecurityOpts  []string `json:"security_options"`
	// Privileged says whether a privileged container gets real host
	// privileges: not under a rootless engine. The device backends need it
	// for io_uring, which the default seccomp profile blocks.
	Privileged bool `json:"privileged"`
}

// dockerTimeout bounds each call, so a hung socket costs seconds, not the
// hour the user rented.
const dockerTimeout = 5 * time.Second

// probeDocker asks the engine named by the environment (DOCKER_HOST,
// DOCKER_API_VERSION, DOCKER_CERT_PATH) for its version and facts.
func probeDocker(ctx context.Context) (DockerInfo, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return DockerInfo{}, fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close()
	info := DockerInfo{Host: cli.DaemonHost()}
	ctx, cancel := context.WithTimeout(ctx, dockerTimeout)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return info, fmt.Errorf("ping Docker engine at %s: %w", info.Host, err)
	}
	v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return info, fmt.Errorf("docker engine at %s: server version: %w", info.Host, err)
	}
	info.Version, info.APIVersion = v.Version, v.APIVersion
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return info, fmt.Errorf("docker engine at %s: info: %w", info.Host, err)
	}
	sys := res.Info
	info.StorageDriver, info.CgroupVersion, info.CgroupDriver = sys.Driver, sys.CgroupVersion, sys.CgroupDriver
	info.SecurityOpts = sys.SecurityOptions
	info.Privileged = true
	for _, o := range sys.SecurityOptions {
		if strings.Contains(o, "name=rootless") {
			info.Privileged = false
		}
	}
	return info, nil
}

// dockerCheck warns when the engine is unreachable or cannot give real
// privileges: the process runtime serves then.
func dockerCheck(info DockerInfo, err error) Check {
	if err != nil {
		return Check{Name: CheckDocker, Status: Warn, Detail: err.Error() + "; the run will use local processes instead of containers"}
	}
	detail := fmt.Sprintf("engine %s (API %s) at %s, storage driver %s, cgroup v%s", info.Version, info.APIVersion, info.Host,
		info.StorageDriver, info.CgroupVersion)
	if !info.Privileged {
		return Check{Name: CheckDocker, Status: Warn, Detail: detail + "; rootless engine: privileged containers get no host privileges, so io_uring and NUMA pinning may be refused"}
	}
	return Check{Name: CheckDocker, Status: Pass, Detail: detail + ", privileged containers possible"}
}
