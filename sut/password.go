package sut

import (
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
)

// Args puts the password file file into the server's flags args: first
// for a config file (redis-server reads a config file only as its first
// argument), last for a flag.
func (p Password) Args(args []string, file string) []string {
	switch p {
	case PasswordAuthFile:
		return append(slices.Clone(args), "--auth-file", file)
	case PasswordConfigFile:
		return append([]string{file}, args...)
	case PasswordFlagFile:
		return append(slices.Clone(args), "--flagfile", file)
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
	case PasswordAuthFile:
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
	}
	return nil, fmt.Errorf("sut: the server takes no password file")
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
