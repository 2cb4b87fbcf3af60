// Command workload is a CPU-bound Go program profiled with runtime/pprof
// to make the pprof fixtures: a hot loop, a recursive function, a call
// chain that the compiler inlines, and work on two goroutines; optionally
// a heap (allocs) profile, which is not CPU evidence.
package main

import (
	"flag"
	"log"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func spin(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// small is inlined into caller: its samples carry an inlined frame.
func small(x uint64) uint64 { return x ^ (x >> 7) }

//go:noinline
func caller(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x = small(x + uint64(i))
	}
	return x
}

func main() {
	out := flag.String("cpuprofile", "cpu.pb.gz", "where to write the CPU profile")
	heap := flag.String("memprofile", "", "where to write a heap profile (not CPU evidence)")
	d := flag.Duration("for", 2*time.Second, "how long to run")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	end := time.Now().Add(*d)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(end) {
			sink += uint64(fib(22))
		}
	}()
	for time.Now().Before(end) {
		sink += spin(200000) + caller(100000)
	}
	wg.Wait()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if *heap != "" {
		keep = make([][]byte, 1000)
		for i := range keep {
			keep[i] = make([]byte, 4096)
		}
		h, err := os.Create(*heap)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(h, 0); err != nil {
			log.Fatal(err)
		}
		if err := h.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

var keep [][]byte
