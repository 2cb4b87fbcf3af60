// Command goworkload is a benchmark harness that records its timings
// through pkg/benchsamples, for the benchmark-samples provider's test.
package main

import (
	"log"
	"sort"
	"time"

	bs "github.com/flameox/flameox/pkg/benchsamples"
)

func main() {
	w, err := bs.FromEnv(bs.Producer{Name: "goworkload", Version: "1"})
	if err != nil {
		log.Fatal(err)
	}
	s := &bs.Series{ID: "sort-1000", Name: "sort", Unit: "ns", Clock: "wall", LoopCount: 10,
		Dimensions: map[string]string{"n": "1000"}}
	for i := range 12 {
		start := time.Now()
		for range 10 {
			x := make([]int, 1000)
			for j := range x {
				x[j] = (j * 7919) % 1000
			}
			sort.Ints(x)
		}
		v := float64(time.Since(start).Nanoseconds()) / 10
		if i < 2 {
			s.Warmups = append(s.Warmups, v)
		} else {
			s.Samples = append(s.Samples, v)
		}
	}
	if err := w.Series(s); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}
