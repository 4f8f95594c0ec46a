package orchestrator

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/sut"
)

// protectLocalServers gives the servers a run starts on this machine a
// password made for the run, so that no other user of the host can
// SHUTDOWN, FLUSHALL, CONFIG SET or DEBUG SLEEP them mid-cell through
// 127.0.0.1. The password is kept in memory and in 0600 files of the
// run's state dir (or, for containers, 0400 files copied into each):
// every server reads it from a file whose name alone is on its command
// line, the way its catalogue entry says (sut.Server.Password: tierbench
// --auth-file, Redis, Valkey and KeyDB a config file as their first
// argument, Dragonfly --flagfile, Garnet --config-import-path); clients
// read it with --auth-file; the bundle never has it. A server the
// catalogue knows no such way for (a --server-cmd) runs without one, and
// the run says so. Across hosts pickHosts makes it (beyond loopback). Shards take it as a lone tierbench server does
// (shards.go).
func (r *runner) protectLocalServers() error {
	if r.auth != "" || r.cfg.HostsMode() || !r.targets.started() {
		return nil
	}
	servers, err := r.cfg.Systems()
	if err != nil {
		return err
	}
	var b [16]byte
	rand.Read(b[:])
	auth := hex.EncodeToString(b[:])
	where := ""
	if k, ok := r.drv.(rig.PasswordKeeper); ok {
		r.auth, r.authFile = auth, k.KeepPassword(auth)
		where = "copied into each container"
	} else {
		file, err := r.writePasswordFile(auth)
		if err != nil {
			return err
		}
		r.auth, r.authFile = auth, file
		where = "in " + file + ", removed at the end"
	}
	if err := r.writeServerPasswords(servers); err != nil {
		return err
	}
	r.printf("servers: a password made for this run, so no other user of the host can reach them (%s; never in the bundle)\n", where)
	for _, s := range servers {
		if s.Password == sut.PasswordNone {
			r.printf("servers: WARNING: %s runs without a password: %s\n", s.Name, s.NoPassword)
		}
	}
	return nil
}

// writeServerPasswords writes, for each way of taking a password other
// than tierbench's (which reads the clients' file), the file the servers
// read the run's password from: given to the runtime where it copies
// files into what it starts (Capabilities.FilesDir), else 0600 in the
// run's secret dir; r.passFiles then names each.
func (r *runner) writeServerPasswords(servers []sut.Server) error {
	give := map[string][]byte{}
	dir := r.drv.Capabilities().FilesDir
	for _, s := range servers {
		p := s.Password
		if p == sut.PasswordNone || p == sut.PasswordAuthFile || r.passFiles[p] != "" {
			continue
		}
		data, err := p.File(r.auth)
		if err != nil {
			return fmt.Errorf("orchestrator: %s's password file: %w", s.Name, err)
		}
		file := ""
		if dir != "" {
			give[p.FileName()] = data
			file = path.Join(dir, p.FileName())
		} else {
			if file, err = r.writeSecretFile(p.FileName(), data); err != nil {
				return fmt.Errorf("orchestrator: %s's password file: %w", s.Name, err)
			}
		}
		if r.passFiles == nil {
			r.passFiles = map[sut.Password]string{}
		}
		r.passFiles[p] = file
	}
	if len(give) > 0 {
		r.drv.Give(give)
	}
	return nil
}

// serverPassword is how a row's server s takes the run's password: its
// flags args with the password file put in, and whether it has one.
func (r *runner) serverPassword(s sut.Server, args []string) ([]string, bool) {
	if r.auth == "" || s.Password == sut.PasswordNone {
		return args, false
	}
	file := r.passFiles[s.Password]
	if s.Password == sut.PasswordAuthFile {
		file = cmp.Or(r.authFile, rig.ContainerPasswordFile)
	}
	if file == "" {
		return args, false
	}
	return s.Password.Args(args, file), true
}

// writePasswordFile writes auth into the run's password file, 0600 in a
// 0700 directory of the checked state dir (removed with the run's
// secrets), and returns the file's name.
func (r *runner) writePasswordFile(auth string) (string, error) {
	file, err := r.writeSecretFile("password", []byte(auth+"\n"))
	if err != nil {
		return "", fmt.Errorf("orchestrator: the password file: %w", err)
	}
	return file, nil
}

// writeSecretFile writes data as a new 0600 file name (never through a
// link, never over a file it did not just remove) in the run's secret
// dir, a 0700 directory of the checked state dir made on first use
// (removed at the end), and returns the file's path.
func (r *runner) writeSecretFile(name string, data []byte) (string, error) {
	if r.secretDir == "" {
		if err := safe.EnsureStateDir(r.cfg.StateDir); err != nil {
			return "", err
		}
		dir := safe.SecretDirs(r.cfg.StateDir, r.plan.RunID)[1]
		os.RemoveAll(dir) // a resumed run's, left when it was killed
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
		r.secretDir = dir
	}
	file := filepath.Join(r.secretDir, name)
	if err := safe.WriteNewFile(file, data, 0o600); err != nil {
		return "", err
	}
	return file, nil
}
