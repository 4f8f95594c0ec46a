//go:build !amd64 || race

package store

import "sync/atomic"

// publishWord is the release store of publish_amd64.go; where a plain
// store is not one (or under the race detector) it is the atomic store.
func publishWord(p *uint64, w uint64) { atomic.StoreUint64(p, w) }
