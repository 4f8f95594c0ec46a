package target

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/sut"
)

// Password is the run's password as the servers it starts take it. The
// run holds it; Own reads it through Env.Password when it starts a
// server.
type Password struct {
	// Auth is the password itself, never written to the bundle; "" when
	// the run has none.
	Auth string
	// File is where tierbench's servers and every client read it: a file
	// of the run's secret dir, or the containers' copy ("" across hosts:
	// theirs).
	File string
	// Files are the files the servers that take it in a form of their own
	// (sut.Password) read it from.
	Files map[sut.Password]string
}

// Secrets is the run's secret dir: a 0700 directory of the checked state
// dir, made on first use and removed at the end of the run.
type Secrets struct {
	StateDir string
	RunID    string
	// Dir is the directory once made, "" before.
	Dir string
}

// ProtectLocalServers gives the servers a run starts on this machine a
// password made for the run, so that no other user of the host can
// SHUTDOWN, FLUSHALL, CONFIG SET or DEBUG SLEEP them mid-cell through
// 127.0.0.1. The password is kept in memory and in 0600 files of the
// run's state dir (or, for containers, 0400 files copied into each):
// every server reads it from a file whose name alone is on its command
// line, the way its catalogue entry says (sut.Server.Password: tierbench
// --auth-file, Redis, Valkey and KeyDB a config file as their first
// argument, Dragonfly --flagfile, Garnet --config-import-path, a
// --server-cmd template where it puts {password_file}); clients read it
// with --auth-file; the bundle never has it. A server with no such way
// (a template without {password_file}) runs without one, and the run
// says so. Across hosts pickHosts makes it
// (beyond loopback). Shards take it as a lone tierbench server does
// (shards.go). The caller asks only when the run starts its servers on
// this machine and has no password yet.
func ProtectLocalServers(cfg plan.Config, drv rig.Driver, secrets *Secrets, printf func(string, ...any)) (Password, error) {
	var p Password
	servers, err := cfg.Systems()
	if err != nil {
		return p, err
	}
	var b [16]byte
	rand.Read(b[:])
	auth := hex.EncodeToString(b[:])
	where := ""
	if k, ok := drv.(rig.PasswordKeeper); ok {
		p.Auth, p.File = auth, k.KeepPassword(auth)
		where = "copied into each container"
	} else {
		file, err := secrets.WritePassword(auth)
		if err != nil {
			return p, err
		}
		p.Auth, p.File = auth, file
		where = "in " + file + ", removed at the end"
	}
	if err := p.writeServerPasswords(servers, drv, secrets); err != nil {
		return p, err
	}
	printf("servers: a password made for this run, so no other user of the host can reach them (%s; never in the bundle)\n", where)
	for _, s := range servers {
		if s.Password == sut.PasswordNone {
			printf("servers: WARNING: %s runs without a password: %s\n", s.Name, s.NoPassword)
		}
	}
	return p, nil
}

// writeServerPasswords writes, for each way of taking a password other
// than tierbench's (which reads the clients' file), the file the servers
// read the run's password from: given to the runtime where it copies
// files into what it starts (Capabilities.FilesDir), else 0600 in the
// run's secret dir; p.Files then names each.
func (p *Password) writeServerPasswords(servers []sut.Server, drv rig.Driver, secrets *Secrets) error {
	give := map[string][]byte{}
	dir := drv.Capabilities().FilesDir
	for _, s := range servers {
		form := s.Password
		if form == sut.PasswordNone || form.ReadsClientsFile() || p.Files[form] != "" {
			continue
		}
		data, err := form.File(p.Auth)
		if err != nil {
			return fmt.Errorf("target: %s's password file: %w", s.Name, err)
		}
		file := ""
		if dir != "" {
			give[form.FileName()] = data
			file = path.Join(dir, form.FileName())
		} else {
			if file, err = secrets.WriteFile(form.FileName(), data); err != nil {
				return fmt.Errorf("target: %s's password file: %w", s.Name, err)
			}
		}
		if p.Files == nil {
			p.Files = map[sut.Password]string{}
		}
		p.Files[form] = file
	}
	if len(give) > 0 {
		drv.Give(give)
	}
	return nil
}

// serverPassword is how a row's server s takes the run's password: its
// flags args with the password file put in, and whether it has one.
func (p Password) serverPassword(s sut.Server, args []string) ([]string, bool) {
	file := p.fileOf(s)
	if file == "" {
		return args, false
	}
	return s.Password.Args(args, file), true
}

// fileOf is the file server s reads the run's password from, "" when it
// takes none: the clients' own for tierbench's server and a template's
// {password_file}, else the file in the form s reads.
func (p Password) fileOf(s sut.Server) string {
	switch {
	case p.Auth == "" || s.Password == sut.PasswordNone:
		return ""
	case s.Password.ReadsClientsFile():
		return cmp.Or(p.File, rig.ContainerPasswordFile)
	}
	return p.Files[s.Password]
}

// WritePassword writes auth into the run's password file, 0600 in a
// 0700 directory of the checked state dir (removed with the run's
// secrets), and returns the file's name.
func (d *Secrets) WritePassword(auth string) (string, error) {
	file, err := d.WriteFile("password", []byte(auth+"\n"))
	if err != nil {
		return "", fmt.Errorf("target: the password file: %w", err)
	}
	return file, nil
}

// WriteFile writes data as a new 0600 file name (never through a
// link, never over a file it did not just remove) in the run's secret
// dir, a 0700 directory of the checked state dir made on first use
// (removed at the end), and returns the file's path.
func (d *Secrets) WriteFile(name string, data []byte) (string, error) {
	if d.Dir == "" {
		if err := safe.EnsureStateDir(d.StateDir); err != nil {
			return "", err
		}
		dir := safe.SecretDirs(d.StateDir, d.RunID)[1]
		os.RemoveAll(dir) // a resumed run's, left when it was killed
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
		d.Dir = dir
	}
	file := filepath.Join(d.Dir, name)
	if err := safe.WriteNewFile(file, data, 0o600); err != nil {
		return "", err
	}
	return file, nil
}
