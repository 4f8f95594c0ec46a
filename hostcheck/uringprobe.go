package hostcheck

// ProbeIOUring really sets up a 4-entry io_uring and closes it: nil when
// this process may use io_uring, else why not (a plan's needs check asks
// it before a run with uring rows starts).
func ProbeIOUring() error { return probeIOUring() }
