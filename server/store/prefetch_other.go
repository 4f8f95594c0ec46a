//go:build !amd64

package store

import "unsafe"

// prefetch is a hint that other architectures go without.
func prefetch(unsafe.Pointer) {}
