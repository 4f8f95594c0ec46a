package store

import (
	"bytes"
	"fmt"
	"testing"
)

// rcModelRecord is the record of address a in the fuzz model: its key
// names a, its value's length comes from the op.
func rcModelRecord(a uint64, valueBytes int) []byte {
	key := fmt.Appendf(nil, "k%07d", a)
	value := bytes.Repeat([]byte{byte('a' + a%26)}, valueBytes)
	rec := make([]byte, recordBytes(uint64(len(key)), uint64(valueBytes), false))
	writeRecord(rec, 0, false, 0, key, value)
	return rec
}

// rcCheckSet checks a set's invariants against the model (the bytes
// admitted at each address): the shape adds up, no address twice, every
// record is the one admitted at its address.
func rcCheckSet(t *testing.T, rc *readCache, w []uint64, base uint64, model map[uint64][]byte) map[uint64]uint64 {
	t.Helper()
	n, used := rcShape(w[0])
	if n > rcMaxRecords || (rcDirStart+n)*8+used > rcSetBytes {
		t.Fatalf("set overfull: %d records, %d B", n, used)
	}
	freqs := map[uint64]uint64{}
	end, sum := uint64(rcSetBytes), uint64(0)
	for i := uint64(0); i < n; i++ {
		d := w[rcDirStart+i]
		a := d & addressMask
		size := uint64(len(model[a]))
		end -= size
		sum += size
		if _, dup := freqs[a]; dup {
			t.Fatalf("address %d twice in the directory", a)
		}
		freqs[a] = d >> 60
		if got := rcOffset(d); got != end {
			t.Fatalf("record at %d: got offset %d, want %d (packed in directory order)", a, got, end)
		}
		if got, want := rcTag(w, i), rcTagOf(rcMix(a)); got != want {
			t.Fatalf("record at %d: got tag %#x, want %#x", a, got, want)
		}
		if got := rc.bytes[base+end : base+end+size]; !bytes.Equal(got, model[a]) {
			t.Fatalf("record at %d: got %q, want the admitted %q", a, got, model[a])
		}
	}
	if sum != used {
		t.Fatalf("directory sizes add to %d, shape says %d", sum, used)
	}
	return freqs
}

// FuzzReadCacheSet drives one set with lookups, admissions and
// invalidations of a few addresses and checks it against a model after
// each: hits return the admitted bytes, an offer always fits a set with
// room, a refusal leaves only records at least as frequent as the offer,
// an eviction drops only less frequent ones, and the counters add up.
func FuzzReadCacheSet(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2, 1, 0, 3, 5, 1, 3, 5})
	f.Add(bytes.Repeat([]byte{1, 7, 3, 1, 9, 200, 0, 7, 0}, 40))
	f.Fuzz(func(t *testing.T, ops []byte) {
		rc := newReadCache(MinReadCacheBytes)
		w, base := rc.set(0)
		model := map[uint64][]byte{}
		var h header
		for len(ops) >= 3 {
			op, a, vb := ops[0]%3, uint64(ops[1]%48)*8+64, int(ops[2])*4
			ops = ops[3:]
			if _, ok := model[a]; !ok {
				model[a] = rcModelRecord(a, vb)
			}
			rec := model[a]
			key := rec[headerBytes : headerBytes+8]
			before := rcCheckSet(t, rc, w, base, model)
			switch op {
			case 0:
				v, out := rc.lookup(a, key, nil, &h)
				_, cached := before[a]
				switch {
				case cached && (out != memMatch || !bytes.Equal(v, rec[headerBytes+8:headerBytes+8+readHeader(rec).valueBytes])):
					t.Fatalf("lookup(%d) of a cached record: got %v %q", a, out, v)
				case !cached && out != memGone:
					t.Fatalf("lookup(%d) of an address not cached: got %v", a, out)
				}
			case 1:
				n, used := rcShape(w[0])
				room := n < rcMaxRecords && (rcDirStart+n+1)*8+used+uint64(len(rec)) <= rcSetBytes
				st := rc.stats()
				rc.admit(a, rec)
				after := rcCheckSet(t, rc, w, base, model)
				_, had := before[a]
				_, has := after[a]
				freq := rcEstimate(w, rcSketchHash(rcMix(a)))
				switch {
				case len(rec) > rcMaxRecordBytes:
					if has != had {
						t.Fatalf("admit(%d) of a %d B record: cached %v → %v, want no change", a, len(rec), had, has)
					}
				case had || room:
					if !has {
						t.Fatalf("admit(%d) into a set with room: not cached", a)
					}
				case !has:
					for b, f := range after {
						if f < freq {
							t.Fatalf("admit(%d) refused at frequency %d, but %d stayed at %d", a, freq, b, f)
						}
					}
				default:
					for b, f := range before {
						if _, kept := after[b]; !kept && f >= freq {
							t.Fatalf("admit(%d) at frequency %d evicted %d at %d", a, freq, b, f)
						}
					}
				}
				if got := rc.stats(); has && !had && got.Admissions != st.Admissions+1 {
					t.Fatalf("admit(%d): admissions %d → %d", a, st.Admissions, got.Admissions)
				}
			case 2:
				rc.invalidate(a, key)
				if _, ok := rcCheckSet(t, rc, w, base, model)[a]; ok {
					t.Fatalf("invalidate(%d): still cached", a)
				}
			}
			st := rc.stats()
			if st.Admissions-st.Evictions-st.Invalidations != st.Records {
				t.Fatalf("counters: %+v, want admissions − evictions − invalidations = records", st)
			}
		}
	})
}
