package plan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// parseServerAddr reads --server-addr: HOST:PORT, redis://[user[:password]@]HOST:PORT
// or rediss://… (TLS). The password is taken out: it is kept in memory
// only, and ServerAddr is left as HOST:PORT.
func (c *Config) parseServerAddr() error {
	if !strings.Contains(c.ServerAddr, "://") {
		return nil
	}
	u, err := url.Parse(c.ServerAddr)
	if err != nil {
		return fmt.Errorf("%w: --server-addr: %v", fault.ErrConfig, redactURLError(err))
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		c.ServerTLS = true
	default:
		return fmt.Errorf("%w: --server-addr %s://…: want redis:// or rediss://", fault.ErrConfig, u.Scheme)
	}
	if u.Port() == "" {
		return fmt.Errorf("%w: --server-addr %s://%s: give the port", fault.ErrConfig, u.Scheme, u.Host)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return fmt.Errorf("%w: --server-addr %s://%s:…@%s: a password on the command line is shown to every user of the host (ps, /proc/PID/cmdline) for the whole run; give %s://%s@%s with the password in a file of yours, --auth-file FILE, or in an environment variable, --auth-env NAME",
				fault.ErrConfig, u.Scheme, u.User.Username(), u.Host, u.Scheme, u.User.Username(), u.Host)
		}
		c.ServerUser = u.User.Username()
	}
	c.ServerAddr = u.Host
	return nil
}

// readServerAuth reads the password of the server at --server-addr from
// --auth-file (its first line; a regular file only, so a FIFO cannot hang
// the run) or from the environment variable --auth-env names.
func (c *Config) readServerAuth() error {
	switch {
	case c.AuthFile == "" && c.AuthEnv == "":
		if c.ServerUser != "" {
			return fmt.Errorf("%w: --server-addr names user %s: give its password with --auth-file FILE or --auth-env NAME", fault.ErrConfig, c.ServerUser)
		}
		return nil
	case c.AuthFile != "" && c.AuthEnv != "":
		return fmt.Errorf("%w: --auth-file and --auth-env both give a password: give one", fault.ErrConfig)
	case c.ServerAddr == "":
		return fmt.Errorf("%w: --auth-file and --auth-env give the password of the server at --server-addr; the servers a run starts get one made for the run", fault.ErrConfig)
	case c.AuthEnv != "":
		c.ServerPassword = os.Getenv(c.AuthEnv)
		if c.ServerPassword == "" {
			return fmt.Errorf("%w: --auth-env %s: the environment has no %s, or it is empty", fault.ErrConfig, c.AuthEnv, c.AuthEnv)
		}
		return nil
	}
	f, err := safe.OpenRegular(c.AuthFile)
	if err != nil {
		return fmt.Errorf("%w: --auth-file: %v", fault.ErrConfig, err)
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: --auth-file %s: %v", fault.ErrConfig, c.AuthFile, err)
	}
	c.ServerPassword = strings.TrimRight(line, "\r\n")
	if c.ServerPassword == "" {
		return fmt.Errorf("%w: --auth-file %s: the first line is empty, want the password", fault.ErrConfig, c.AuthFile)
	}
	return nil
}

// redactURLError drops the URL (and any password in it) from a parse error.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
