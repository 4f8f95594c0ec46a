//go:build !amd64

package cacheline

import "unsafe"

// Prefetch is a hint that other architectures go without.
func Prefetch(unsafe.Pointer) {}

// PrefetchAll is a hint that other architectures go without.
func PrefetchAll([]uintptr) {}
