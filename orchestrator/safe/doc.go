// Package safe keeps a run safe on a shared host: the directories it
// writes (data dir, state dir, --out) are checked like ssh's StrictModes
// before use, the data dir is claimed with a flock and a marker and
// emptied only of what tierbench wrote, files are created with
// O_EXCL|O_NOFOLLOW, and children are tracked by pidfd so that a stale
// pid file can never make a run signal another user's process.
//
// Invariant: nothing here follows a link planted by another user, and
// nothing deletes or signals what this user's runs did not create.
package safe
