package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// ACL users at the level a benchmark needs: a default user, whose password
// is Config.Auth (Redis's requirepass), and named users with passwords,
// each allowed every command and key. Users are given in Redis's ACL rule
// spelling, the subset that says who may log in:
//
//	on, off          the user may (not) authenticate
//	nopass           any password is accepted
//	>password        a password
//	#<sha256 hex>    a password given by its SHA-256, as ACL LIST shows it
//	~*, allkeys      every key (required: users have no key restrictions)
//	&*, allchannels  every channel (accepted; there is no pub/sub)
//	+@all, allcommands  every command (required of a user that is on)
//	sanitize-payload, skip-sanitize-payload, resetchannels
//	                 accepted as no-ops (there is no RESTORE and no
//	                 pub/sub), so that a file ACL SAVE wrote loads
//
// Other rules (key patterns, single commands, selectors, reset...) are
// refused with an error that names the rule: a benchmark that meant to
// restrict a user must not silently run unrestricted.

// aclUser is one user. Passwords are kept as their SHA-256 only, as Redis
// keeps them, and compared in constant time.
type aclUser struct {
	name    string
	enabled bool
	nopass  bool
	hashes  [][sha256.Size]byte
}

// userTable holds the users, fixed at start.
type userTable struct {
	byName map[string]*aclUser
	def    *aclUser // "default"
}

// newUserTable makes the default user from requirepass (nopass when it is
// empty) and adds the users rules describes, one a string.
func newUserTable(requirepass string, rules []string) (*userTable, error) {
	def := &aclUser{name: "default", enabled: true, nopass: requirepass == ""}
	if requirepass != "" {
		def.hashes = [][sha256.Size]byte{sha256.Sum256([]byte(requirepass))}
	}
	t := &userTable{byName: map[string]*aclUser{"default": def}, def: def}
	defined := map[string]bool{}
	for _, r := range rules {
		u, err := parseUser(r)
		if err != nil {
			return nil, err
		}
		if defined[u.name] {
			return nil, fmt.Errorf("server: user %q is given twice: give each user once, with all its rules", u.name)
		}
		defined[u.name] = true
		if u.name == "default" {
			if requirepass != "" {
				return nil, fmt.Errorf("server: the default user's password is given by both the password option and user %q: give it once", r)
			}
			t.def = u
		}
		t.byName[u.name] = u
	}
	return t, nil
}

// CheckUsers reports what is wrong with users (Config.Users) beside the
// default user's password requirepass (Config.Auth), as New would.
func CheckUsers(requirepass string, users []string) error {
	_, err := newUserTable(requirepass, users)
	return err
}

// parseUser reads "name rule rule ...". A user starts off, without a
// password, as a new user does in Redis.
func parseUser(spec string) (*aclUser, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return nil, fmt.Errorf("server: user %q: want a name and rules, like \"alice on >secret ~* &* +@all\"", spec)
	}
	u := &aclUser{name: words[0]}
	var allKeys, allCommands bool
	for _, w := range words[1:] {
		switch lw := strings.ToLower(w); {
		case lw == "on":
			u.enabled = true
		case lw == "off":
			u.enabled = false
		case lw == "nopass":
			u.nopass, u.hashes = true, nil
		case w[0] == '>':
			u.nopass = false
			u.hashes = append(u.hashes, sha256.Sum256([]byte(w[1:])))
		case w[0] == '#':
			b, err := hex.DecodeString(w[1:])
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("server: user %s: rule %q: want # and the 64 hex digits of the password's SHA-256", u.name, w)
			}
			u.nopass = false
			u.hashes = append(u.hashes, [sha256.Size]byte(b))
		case lw == "~*" || lw == "allkeys":
			allKeys = true
		case lw == "&*" || lw == "allchannels":
		case lw == "+@all" || lw == "allcommands":
			allCommands = true
		case lw == "sanitize-payload" || lw == "skip-sanitize-payload" || lw == "resetchannels":
		default:
			return nil, fmt.Errorf("server: user %s: rule %q is not supported: tierbench takes on, off, nopass, >password, #sha256, ~* (allkeys), &* (allchannels) and +@all (allcommands)", u.name, w)
		}
	}
	// A user that is off can never log in, so what it may run does not
	// matter: "user default off" is a common line of an ACL file.
	if u.enabled && (!allKeys || !allCommands) {
		return nil, fmt.Errorf("server: user %s: tierbench users run every command on every key: add ~* and +@all", u.name)
	}
	if u.enabled && !u.nopass && len(u.hashes) == 0 {
		return nil, fmt.Errorf("server: user %s is on but has no password and no nopass, so it could never authenticate: add >password or nopass", u.name)
	}
	return u, nil
}

// names lists the users' names in order, as ACL USERS does.
func (t *userTable) names() []string {
	names := make([]string, 0, len(t.byName))
	for n := range t.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// check returns the user that name (nil: the default user) and pass
// authenticate as, or nil. The hash of pass is compared with each of the
// user's in constant time; an unknown or disabled user is hashed too.
func (t *userTable) check(name, pass []byte) *aclUser {
	u := t.def
	if name != nil {
		u = t.byName[string(name)]
	}
	sum := sha256.Sum256(pass)
	if u == nil || !u.enabled {
		return nil
	}
	if u.nopass {
		return u
	}
	ok := 0
	for i := range u.hashes {
		ok |= subtle.ConstantTimeCompare(sum[:], u.hashes[i][:])
	}
	if ok == 1 {
		return u
	}
	return nil
}

// startUser is the user a new connection is authenticated as: the default
// user when it is enabled and takes no password, nil (not authenticated)
// otherwise.
func (t *userTable) startUser() *aclUser {
	if t.def.enabled && t.def.nopass {
		return t.def
	}
	return nil
}

const wrongPass = "WRONGPASS invalid username-password pair or user is disabled."

// login makes u the connection's user.
func (c *conn) login(u *aclUser) {
	c.user = u
	c.authed = true
	c.pub.user.Store(&u.name)
}

func cmdAuth(c *conn, args [][]byte) {
	var user, pass []byte
	switch len(args) {
	case 2:
		pass = args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.errorReply("ERR syntax error")
		return
	}
	if user == nil && c.srv.users.def.nopass {
		c.errorReply("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	u := c.srv.users.check(user, pass)
	if u == nil {
		c.errorReply(wrongPass)
		return
	}
	c.login(u)
	c.out = appendOK(c.out)
}

func cmdACL(c *conn, args [][]byte) {
	sub := args[1]
	switch {
	case bytes.EqualFold(sub, []byte("whoami")):
		if len(args) != 2 {
			c.wrongArity("acl|whoami")
			return
		}
		c.out = appendBulkString(c.out, c.user.name)
	case bytes.EqualFold(sub, []byte("users")):
		if len(args) != 2 {
			c.wrongArity("acl|users")
			return
		}
		names := c.srv.users.names()
		c.out = appendArray(c.out, len(names))
		for _, n := range names {
			c.out = appendBulkString(c.out, n)
		}
	default:
		c.errorReply("ERR unknown subcommand '" + string(truncate(sub, 128)) + "'. Try ACL HELP.")
	}
}

func init() {
	registerCommands(&commandSpec{name: "acl", arity: -2, run: cmdACL, group: "server", summary: "ACL WHOAMI and ACL USERS."})
}
