package orchestrator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// protectLocalServers gives the tierbench servers a run starts on this
// machine a password made for the run, so that no other user of the host
// can SHUTDOWN or FLUSHALL them mid-cell through 127.0.0.1. The password
// is kept in memory and in one 0600 file of the run's state dir (or, for
// containers, a 0400 file copied into each): servers and clients read it
// with --auth-file, never from a command line, and the bundle never has
// it. Across hosts pickHosts makes it (beyond loopback).
//
// Servers other than tierbench, shards and the scenarios held in RAM run
// without one: their command lines and probes take no password yet.
func (r *runner) protectLocalServers() error {
	if r.auth != "" || r.cfg.HostsMode() || !r.targets.started() || r.cfg.ForeignServers() ||
		r.cfg.MaxShards() > 1 || r.cfg.ScenarioName() == results.ScenarioAll || r.cfg.Spec().InRAM {
		return nil
	}
	var b [16]byte
	rand.Read(b[:])
	auth := hex.EncodeToString(b[:])
	if k, ok := r.drv.(rig.PasswordKeeper); ok {
		r.auth, r.authFile = auth, k.KeepPassword(auth)
		r.printf("servers: a password made for this run, so no other user of the host can reach them (copied into each container; never in the bundle)\n")
		return nil
	}
	file, err := r.writePasswordFile(auth)
	if err != nil {
		return err
	}
	r.auth, r.authFile = auth, file
	r.printf("servers: a password made for this run, so no other user of the host can reach them (in %s, removed at the end; never in the bundle)\n", file)
	return nil
}

// writePasswordFile writes auth into the run's password file, 0600 in a
// 0700 directory of the checked state dir (removed with the run's
// secrets), and returns the file's name.
func (r *runner) writePasswordFile(auth string) (string, error) {
	if err := safe.EnsureStateDir(r.cfg.StateDir); err != nil {
		return "", err
	}
	dir := safe.SecretDirs(r.cfg.StateDir, r.plan.RunID)[1]
	os.RemoveAll(dir) // a resumed run's, left when it was killed
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("orchestrator: the password file: %w", err)
	}
	r.secretDir = dir
	file := filepath.Join(dir, "password")
	if err := safe.WriteNewFile(file, []byte(auth+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("orchestrator: the password file: %w", err)
	}
	return file, nil
}
