package sut

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Password is how a server takes the run's password without it on its
// command line, where any user of the host reads it in /proc/PID/cmdline:
// always from a file the run writes 0600 in its private state dir (or
// copies into the container), whose name alone is in argv.
type Password int

const (
	// PasswordNone: the catalogue knows no way off argv; the server runs
	// without a password and the run says so (Server.NoPassword says why).
	PasswordNone Password = iota
	// PasswordAuthFile: tierbench's own server, --auth-file FILE, the
	// password the file's first line.
	PasswordAuthFile
	// PasswordConfigFile: Redis and the servers that took its command
	// line (Valkey, KeyDB): FILE, a config file holding one requirepass
	// directive, as the server's first argument (redis-server's
	// CONFIG-FILE), the flags after it.
	PasswordConfigFile
	// PasswordFlagFile: Dragonfly (abseil flags): --flagfile FILE holding
	// one --requirepass=… line.
	PasswordFlagFile
	// PasswordConfigImport: Garnet: --config-import-path FILE, a garnet.conf
	// (JSON, Garnet's default import format) setting AuthenticationMode
	// to Password and Password to the password (garnetConf).
	PasswordConfigImport
	// PasswordPlaceholder: a --server-cmd template that names
	// {password_file}: the file the clients and tierbench's own server
	// read (the password, one line), put where the template says.
	PasswordPlaceholder
)

// ReadsClientsFile reports whether the server reads the password from the
// file the run's clients read (tierbench's --auth-file, a template's
// {password_file}), not from one of a form of its own.
func (p Password) ReadsClientsFile() bool {
	return p == PasswordAuthFile || p == PasswordPlaceholder
}

// Args puts the password file file into the server's flags args: first
// for a config file (redis-server reads a config file only as its first
// argument), last for a flag; a template's {password_file} has put it in
// already.
func (p Password) Args(args []string, file string) []string {
	switch p {
	case PasswordAuthFile:
		return append(slices.Clone(args), "--auth-file", file)
	case PasswordConfigFile:
		return append([]string{file}, args...)
	case PasswordFlagFile:
		return append(slices.Clone(args), "--flagfile", file)
	case PasswordConfigImport:
		return append(slices.Clone(args), "--config-import-path", file)
	}
	return args
}

// FileName is the name the password file of this kind has in the run's
// secret dir (or the container's files dir).
func (p Password) FileName() string {
	switch p {
	case PasswordAuthFile:
		return "password"
	case PasswordConfigFile:
		return "requirepass.conf"
	case PasswordFlagFile:
		return "requirepass.flags"
	case PasswordConfigImport:
		return "garnet.conf"
	}
	return ""
}

// File is the content of the file the server reads pw from. pw is one
// value, never a directive: for a config file it is quoted so that no
// byte of it (a space, a quote, a newline) can end the value or the line.
// A password the file's syntax cannot hold is refused.
func (p Password) File(pw string) ([]byte, error) {
	if pw == "" {
		// An empty requirepass means no password at all.
		return nil, fmt.Errorf("sut: an empty password")
	}
	switch p {
	case PasswordAuthFile, PasswordPlaceholder:
		if strings.ContainsAny(pw, "\r\n") {
			return nil, fmt.Errorf("sut: a password file holds one line: the password may not hold a line break")
		}
		return []byte(pw + "\n"), nil
	case PasswordConfigFile:
		return []byte("requirepass " + redisQuote(pw) + "\n"), nil
	case PasswordFlagFile:
		// Abseil's flag file is one flag a line, trimmed, and takes what
		// follows = as it is: there is no quoting, so what trimming or a
		// line break would change is refused.
		if strings.ContainsAny(pw, "\r\n\x00") || strings.TrimSpace(pw) != pw {
			return nil, fmt.Errorf("sut: a flag file cannot hold a password with a line break, a NUL or blanks at its ends")
		}
		return []byte("--requirepass=" + pw + "\n"), nil
	case PasswordConfigImport:
		return garnetConf(pw)
	}
	return nil, fmt.Errorf("sut: the server takes no password file")
}

// garnetConf is the garnet.conf Garnet reads pw from: a JSON object whose
// keys are the names of Garnet's options as its configuration file spells
// them (exactly: Garnet matches them case-sensitively), its authentication
// mode the enum's name. JSON escapes every byte that could end the value.
// Garnet turns the password into bytes as ASCII, so a byte past 0x7f would
// be compared as '?': such a password is refused.
func garnetConf(pw string) ([]byte, error) {
	for i := 0; i < len(pw); i++ {
		if pw[i] >= 0x80 {
			return nil, fmt.Errorf("sut: Garnet reads its password as ASCII: the password may not hold byte %#x", pw[i])
		}
	}
	b, err := json.Marshal(struct {
		Mode     string `json:"AuthenticationMode"`
		Password string `json:"Password"`
	}{"Password", pw})
	if err != nil {
		return nil, fmt.Errorf("sut: garnet.conf: %w", err)
	}
	return append(b, '\n'), nil
}

// redisQuote quotes s as Redis's config parser (sdssplitargs) reads a
// double-quoted argument: printable ASCII as it is but " and \ escaped,
// every other byte as \xHH, so the result is one line and one argument.
func redisQuote(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	b.WriteByte('"')
	return b.String()
}
