// Package hostcheck holds the preflight checks and the host fingerprint:
// NUMA topology, fs.aio-max-nr, an O_DIRECT-capable data directory,
// io_uring and libaio availability, free disk and memory, the Docker engine,
// and the fio random-read baseline. Every /sys and /proc read goes through a
// root directory that tests point at a fake tree.
package hostcheck
