// Package docker is the runtime of containers, on the local engine or on
// the engines of other hosts (--server-host, --client-hosts): images built
// FROM scratch from the tierbench binary (nothing pulled unless --pull),
// every container labelled with the run's id and its owner's pid so that
// a later run removes only what a dead run left, the engine leased for
// the run's life.
package docker
