package bench

import "github.com/tierbench/tierbench/internal/keyspace"

// reqLayout is where the key digits and values sit in one command of op
// carrying nkeys keys as appendCommand encodes it: every key has the same
// length and every value too, so a command built once can be given other
// keys by rewriting those bytes in place (fill), which is how offline
// cells redraw keys without building requests again.
type reqLayout struct {
	size    int   // bytes of the command
	keyAt   []int // offset of each key's digits
	valueAt []int // offset of each value (SET, MSET)
}

// newLayout lays out op with nkeys keys (1 for single-key commands, none
// for PING), following appendCommand step by step.
func newLayout(op opcode, nkeys, keyLength, valueLength int) reqLayout {
	var l reqLayout
	var buf []byte
	key := func() {
		l.keyAt = append(l.keyAt, len(buf)+len(appendBulkHeader(nil, keyLength)))
		buf = appendBulkKey(buf, 0, keyLength)
	}
	value := func() {
		l.valueAt = append(l.valueAt, len(buf)+len(appendBulkHeader(nil, valueLength)))
		buf = appendBulkValue(buf, 0, valueLength)
	}
	switch op {
	case opGet, opIncr, opDel:
		buf = appendBulkString(appendArrayHeader(buf, 2), op.String())
		key()
	case opSet:
		buf = appendBulkString(appendArrayHeader(buf, 3), "SET")
		key()
		value()
	case opMGet:
		buf = appendBulkString(appendArrayHeader(buf, 1+nkeys), "MGET")
		for range nkeys {
			key()
		}
	case opMSet:
		buf = appendBulkString(appendArrayHeader(buf, 1+2*nkeys), "MSET")
		for range nkeys {
			key()
			value()
		}
	default: // opPing
		buf = appendBulkString(appendArrayHeader(buf, 1), "PING")
	}
	l.size = len(buf)
	return l
}

// fill writes keys (and each key's value) into cmd, a command of this
// layout; len(keys) is the layout's key count.
func (l *reqLayout) fill(cmd []byte, keys []uint64, keyLength, valueLength int) {
	for i, at := range l.keyAt {
		keyspace.PutKey(cmd[at:at+keyLength], keys[i])
	}
	for i, at := range l.valueAt {
		fillValue(cmd[at:at+valueLength], keys[i])
	}
}

// redrawBatch gives batch i of tb fresh keys from the plan's sampler,
// rewriting its requests in place; its replies must all be in.
func (tb *threadBatches) redrawBatch(p *plan, i int) {
	b := p.Batch
	keys := tb.keys[i*b : (i+1)*b]
	for j := range keys {
		keys[j] = p.sampler.Next(tb.rng)
	}
	req := tb.req[tb.offsets[i]:tb.offsets[i+1]]
	if p.op.multiKey() {
		tb.layout.fill(req, keys, p.keyLength, p.ValueLength)
		return
	}
	size := tb.layout.size
	for j := range keys {
		tb.layout.fill(req[j*size:(j+1)*size], keys[j:j+1], p.keyLength, p.ValueLength)
	}
}

// redrawRequest gives single-key request r of the ring (--pipeline
// window) a fresh key; its reply must be in.
func (tb *threadBatches) redrawRequest(p *plan, r int) {
	tb.keys[r] = p.sampler.Next(tb.rng)
	size := tb.layout.size
	tb.layout.fill(tb.req[r*size:(r+1)*size], tb.keys[r:r+1], p.keyLength, p.ValueLength)
}
