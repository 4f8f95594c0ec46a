package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSortedSetMatchesSortedSlice runs random adds, score changes and pops
// on a sortedSet and on a sorted slice, and compares the order after each.
func TestSortedSetMatchesSortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var z sortedSet
	var want []zEntry
	scoreOf := map[string]float64{}
	for op := 0; op < 20000; op++ {
		if rng.IntN(5) == 0 && len(want) > 0 {
			got := z.popMin()
			if got != want[0] {
				t.Fatalf("op %d: popMin got %v, want %v", op, got, want[0])
			}
			delete(scoreOf, want[0].member)
			want = want[1:]
			continue
		}
		m := "m" + strconv.Itoa(rng.IntN(500))
		f := float64(rng.IntN(100))
		old, had := scoreOf[m]
		if added := z.add(m, f); added == had {
			t.Fatalf("op %d: add(%s, %v) said new=%v, the member was there: %v", op, m, f, added, had)
		}
		if had {
			i := slices.Index(want, zEntry{old, m})
			want = slices.Delete(want, i, i+1)
		}
		scoreOf[m] = f
		i, _ := slices.BinarySearchFunc(want, zEntry{f, m}, zLess)
		want = slices.Insert(want, i, zEntry{f, m})
		if z.len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", op, z.len(), len(want))
		}
	}
	var got []zEntry
	for x := z.list.head.next[0]; x != nil; x = x.next[0] {
		got = append(got, x.e)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("final order differs: got %d entries, want %d", len(got), len(want))
	}
}

// TestZaddDescendingKeepsGetsFast: ZADD of 500 k members in descending
// score order (each new member lands first) completes in seconds, and
// another client's GETs meanwhile (from the device when tiered) stay fast:
// a sorted slice made this quadratic (150 k members took 28 s), under the
// lock every GET took (p99 139 ms, max 1.3 s).
//
// Measured with go test -race (the server process is built without it),
// five runs each, on the quiet machine: GET p99 1.8 to 2.9 ms in memory,
// 4.2 to 4.9 ms tiered; at a load average of 7 to 12 from other builds and
// tests, 3.1 to 3.9 ms and 5.8 to 11.3 ms. Before the device's reapers
// waited on a doorbell (device/doorbell.go) a tiered GET waited for the P
// its reaper held while blocked in io_getevents, up to the runtime
// monitor's 10-20 ms: 7.6 to 13.9 ms quiet, 16 and 27 ms in the suite. The
// test holds both to 20 ms, which the one-lock server (139 ms) fails by far
// and a loaded machine still passes; TestIdleReapersHoldNoThread guards
// the reapers themselves.
func TestZaddDescendingKeepsGetsFast(t *testing.T) {
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			p := startServerProcess(t, tiered)
			getter, adder := dialAddr(t, p.addr), dialAddr(t, p.addr)
			getter.do("SET", "plain", "v")
			if tiered {
				// 20 x 1 MiB pushes "plain" out of the 16 MiB in memory:
				// the GETs below read it from the device.
				for i := 0; i < 20; i++ {
					getter.do("SET", "fill:"+strconv.Itoa(i), strings.Repeat("f", 1<<20))
				}
			}
			members, perCmd := zaddMembers(), 1000
			var req []byte
			for i := 0; i < members; i += perCmd {
				args := []string{"ZADD", "z"}
				for j := i; j < i+perCmd; j++ {
					args = append(args, strconv.Itoa(members-j), "member:"+strconv.Itoa(j))
				}
				req = append(req, encodeArgs(args...)...)
			}
			start := time.Now()
			var wg sync.WaitGroup
			wg.Add(1)
			var addErr error
			go func() {
				defer wg.Done()
				go adder.nc.Write(req)
				for i := 0; i < members/perCmd; i++ {
					b, err := readReply(adder.r)
					if err != nil || string(b) != ":1000\r\n" {
						addErr = fmt.Errorf("ZADD %d: got %q, %v", i, b, err)
						return
					}
				}
			}()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			var lat []time.Duration
		loop:
			for {
				select {
				case <-done:
					break loop
				default:
				}
				t0 := time.Now()
				if got := getter.do("GET", "plain"); got != bulk("v") {
					t.Fatalf("GET plain: got %q", got)
				}
				lat = append(lat, time.Since(t0))
			}
			took := time.Since(start)
			if addErr != nil {
				t.Fatal(addErr)
			}
			if got := getter.do("ZCARD", "z"); got != ":"+strconv.Itoa(members)+"\r\n" {
				t.Errorf("ZCARD z: got %q, want %d", got, members)
			}
			if got := getter.do("ZPOPMIN", "z", "2"); got != array(bulk("member:"+strconv.Itoa(members-1)), bulk("1"), bulk("member:"+strconv.Itoa(members-2)), bulk("2")) {
				t.Errorf("ZPOPMIN z 2: got %q, want the two last added", got)
			}
			slices.Sort(lat)
			p99 := lat[len(lat)*99/100]
			t.Logf("ZADD of %d members in descending order: %v; %d GETs meanwhile, p50 %v, p99 %v, max %v",
				members, took.Round(time.Millisecond), len(lat), lat[len(lat)/2], p99, lat[len(lat)-1])
			if len(lat) < 100 {
				t.Errorf("only %d GETs answered while ZADD ran %v: %s", len(lat), took, strings.TrimSpace(fmt.Sprint(lat)))
			}
			// Fairness, relative to the work: a GET may wait for the
			// ZADD commands the server is in the middle of, not for a
			// twenty-fifth of the whole pipeline (500 commands). An
			// absolute bound measured the machine: under a loaded test
			// run the ZADD took 2.9 s and GET p99 was 24 ms, where a
			// quiet one gives 1.1-1.3 s and 2-5 ms.
			if bound := max(20*time.Millisecond, took/25); p99 > bound {
				t.Errorf("GET p99 %v while ZADD ran for %v, want under %v", p99, took, bound)
			}
			if took > time.Minute && members == 500_000 {
				t.Errorf("ZADD of %d members in descending order took %v, want seconds", members, took)
			}
		})
	}
}

// zaddMembers is 500 k, or $TIERBENCH_ZADD_MEMBERS (to measure the old
// quadratic code at a size it finishes).
func zaddMembers() int {
	if n, err := strconv.Atoi(os.Getenv("TIERBENCH_ZADD_MEMBERS")); err == nil && n >= 2000 {
		return n / 1000 * 1000
	}
	return 500_000
}
