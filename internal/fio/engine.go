package fio

// Engine is fio's --ioengine for a tierbench device backend: io_uring for
// uring, the backend's own name otherwise (libaio).
func Engine(backend string) string {
	if backend == "uring" {
		return "io_uring"
	}
	return backend
}
