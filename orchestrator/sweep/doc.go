// Package sweep holds the run's two size sweeps, each a row dimension: the
// memory-tier sweep (--memory as a list: the server's in-memory log per
// row) and the read-cache sweep (--readcache-memory as a list). Each
// says itself what it supports, what it turns off of a profile, and how
// it multiplies the rows; the facade registers both.
package sweep
