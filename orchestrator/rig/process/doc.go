// Package process is the runtime of child processes on this machine:
// servers and clients started as programs, pinned with sched_setaffinity
// and set_mempolicy by the tierbench binary itself, each tracked by pidfd
// and listed in the run's pid file so that a later run can remove what
// an interrupted one left.
package process
