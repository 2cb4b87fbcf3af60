package aiperf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// TestParallelEqualsSerial: the batched workers give the tables,
// summaries and failure (code, message, location) of the one-goroutine
// loop, on the real exports and on cut, mutated and bounded copies, with
// batches of one line to the default size.
func TestParallelEqualsSerial(t *testing.T) {
	var inputs [][]byte
	var names []string
	add := func(name string, b []byte) { inputs, names = append(inputs, b), append(names, name) }
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dir := range []string{"mock-0.13", "run1-2025"} {
		data, err := os.ReadFile(filepath.Join(formatstest.Testdata(), "aiperf", dir, "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		add(dir, data)
		add(dir+" blank lines", bytes.ReplaceAll(data, []byte("\n"), []byte("\n \n\n")))
		add(dir+" no last newline", bytes.TrimRight(data, "\n"))
		for i := range 12 {
			add(fmt.Sprintf("%s cut %d", dir, i), data[:rng.IntN(len(data))])
			m := bytes.Clone(data)
			const bytesIn = "{}\",:0a\n\x00"
			m[rng.IntN(len(m))] = bytesIn[rng.IntN(len(bytesIn))]
			add(fmt.Sprintf("%s mutated %d", dir, i), m)
		}
	}
	limits := []map[string]int64{nil, {"max_line_bytes": 900}}
	defer func(n int) { batchBytes, serialOnly = n, false }(batchBytes)
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	for i, data := range inputs {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, lim := range limits {
			serialOnly = true
			want, wantErr := formatstest.DecodeFile(t, RecordsSpec, path, lim, nil)
			serialOnly = false
			for _, size := range []int{1, 700, 8 << 10, 256 << 10} {
				batchBytes = size
				got, err := formatstest.DecodeFile(t, RecordsSpec, path, lim, nil)
				if !reflect.DeepEqual(err, wantErr) {
					t.Fatalf("%s, limits %v, batches of %d bytes: failure\n%v\nwant\n%v", names[i], lim, size, err, wantErr)
				}
				if !sameTables(got, want) {
					t.Fatalf("%s, limits %v, batches of %d bytes: tables differ", names[i], lim, size)
				}
			}
		}
	}
}

// sameTables compares headers, encoded rows and summaries (the serial
// loop hands every row in one reused struct, so Typed holds aliases).
func sameTables(a, b *formatstest.Sink) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	if len(a.Tables) != len(b.Tables) {
		return false
	}
	for k := range a.Tables {
		x, y := a.Tables[k], b.Tables[k]
		if !reflect.DeepEqual(x.Header, y.Header) || !reflect.DeepEqual(x.Rows, y.Rows) || !reflect.DeepEqual(x.Summary, y.Summary) {
			return false
		}
	}
	return true
}

// TestPipeFailsAtOnce: a bad record read from a pipe fails the decode at
// once, while the writer keeps the pipe open: no reader goroutine is left
// waiting for more input first.
func TestPipeFailsAtOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(formatstest.Testdata(), "aiperf", "mock-0.13", "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data = append(bytes.Clone(data), "{nope\n"...)
	open := make(chan struct{})
	defer close(open)
	done := make(chan error, 1)
	go func() {
		_, err := formatstest.Decode(RecordsSpec, "x.jsonl", data, nil, func(r io.Reader) io.Reader { return &stalling{r: r, open: open} })
		done <- err
	}()
	select {
	case err := <-done:
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
			t.Fatalf("got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the decode waits on the open pipe after a bad record")
	}
}

// stalling reads r, then blocks (a pipe whose writer is still there)
// until open closes.
type stalling struct {
	r    io.Reader
	open chan struct{}
}

func (s *stalling) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		<-s.open
	}
	return n, err
}
