// Package pprofbench is a small Go benchmark that the pprof decoder's
// reference tests profile with go test -cpuprofile -memprofile
// -blockprofile -mutexprofile: a hot loop and a recursion under pprof.Do
// labels, an inlined call, allocations of two sizes kept live, contended
// mutexes and blocking channel receives. TestGoroutineProfile writes a
// goroutine profile with runtime/pprof while labelled goroutines wait.
package pprofbench

import (
	"context"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
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

// small is inlined into mix: its samples carry an inlined frame.
func small(x uint64) uint64 { return x ^ (x >> 7) }

//go:noinline
func mix(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x = small(x + uint64(i))
	}
	return x
}

var keep [][]byte

//go:noinline
func allocSmall() { keep = append(keep, make([]byte, 64)) }

//go:noinline
func allocLarge() { keep = append(keep, make([]byte, 32<<10)) }

var mu sync.Mutex

// contend makes goroutines fight over mu (mutex and block profiles).
//
//go:noinline
func contend() {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				mu.Lock()
				sink += spin(2000)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// wait blocks on a channel receive (block profile).
//
//go:noinline
func wait() {
	ch := make(chan int)
	go func() { time.Sleep(200 * time.Microsecond); ch <- 1 }()
	<-ch
}

func BenchmarkWork(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		pprof.Do(ctx, pprof.Labels("phase", "spin", "worker", "a"), func(context.Context) { sink += spin(300000) })
		pprof.Do(ctx, pprof.Labels("phase", "fib"), func(context.Context) { sink += uint64(fib(22)) })
		sink += mix(100000)
		if len(keep) < 20000 {
			allocSmall()
			allocSmall()
			allocLarge()
		}
		contend()
		wait()
	}
}

// TestGoroutineProfile writes the goroutine profile to the path in
// PPROFBENCH_GOROUTINES while labelled goroutines wait on a channel.
func TestGoroutineProfile(t *testing.T) {
	path := os.Getenv("PPROFBENCH_GOROUTINES")
	if path == "" {
		t.Skip("PPROFBENCH_GOROUTINES names no output path")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, role := range []string{"reader", "reader", "reader", "writer"} {
		wg.Add(1)
		go pprof.Do(context.Background(), pprof.Labels("role", role), func(context.Context) {
			defer wg.Done()
			_ = i
			<-stop
		})
	}
	time.Sleep(50 * time.Millisecond)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
}
