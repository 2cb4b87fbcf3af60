package aiperf

import (
	"context"
	"sync"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/lines"
	"github.com/flameox/flameox/internal/table"
)

// A records file is lines that parse on their own, so with more than one
// CPU the lines are read in batches, parsed by workers, and their rows
// written in file order by the decoder's goroutine. Counts, the first
// failure and where it is are what the one-goroutine loop gives: each
// batch is counted apart and added in order (TestParallelEqualsSerial).

// serialOnly makes decodeRecords use the one-goroutine loop.
var serialOnly bool

// batchBytes is the size of a batch's lines: large enough that a batch
// costs one channel round trip per few hundred records.
var batchBytes = 256 << 10

// batch is a run of consecutive records.
type batch struct {
	buf   []byte
	spans [][2]int     // each line's bytes in buf
	lines []lines.Line // the lines, Bytes in buf once sent
	first int64        // record index of the first line
	// end ends the input after these lines: the read failure or the
	// cancellation the loop would have returned; nil at the end of file.
	end error
	// Filled by the worker.
	rows   []table.InferenceRequest
	fail   *evidence.Failure // of the line after the last row
	counts *recordReader
	done   chan struct{}
}

// sinkError is an error of the output, returned as it is.
type sinkError struct{ err error }

func (e sinkError) Error() string { return e.err.Error() }

// parallel reads the records with workers, calling emit for each row in
// order, and adds the counts into r. It returns the records read and the
// size of an unterminated last line, or the failure that ended the read
// (a sinkError when emit failed).
func (r *recordReader) parallel(ctx context.Context, lr *lines.Reader, workers int, emit func(*table.InferenceRequest) error) (n, unterminated int64, err error) {
	work := make(chan *batch)
	order := make(chan *batch, 2*workers+2)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	stop := func() {
		close(quit)
		for range order {
			// Let the reader see quit rather than a full channel.
		}
		wg.Wait()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(work)
		unterminated = r.split(ctx, lr, order, work, quit)
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w *recordReader
			for b := range work {
				w = r.parseBatch(b, w)
			}
		}()
	}
	for b := range order {
		<-b.done
		for i := range b.rows {
			if err := emit(&b.rows[i]); err != nil {
				stop()
				return n, 0, sinkError{err}
			}
			n++
		}
		r.add(b.counts)
		if b.fail != nil {
			stop()
			return n, 0, b.fail
		}
		if b.end != nil {
			stop()
			return n, 0, b.end
		}
	}
	wg.Wait()
	return n, unterminated, nil
}

// split reads lines into batches, sending each to order (for the writer)
// and to work (for a worker), until the input ends or quit closes.
func (r *recordReader) split(ctx context.Context, lr *lines.Reader, order, work chan<- *batch, quit <-chan struct{}) (unterminated int64) {
	var n int64
	b := &batch{first: n, done: make(chan struct{})}
	send := func() bool {
		for i, s := range b.spans {
			b.lines[i].Bytes = b.buf[s[0]:s[1]:s[1]]
		}
		select {
		case order <- b:
		case <-quit:
			return false
		}
		select {
		case work <- b:
		case <-quit:
			return false
		}
		return true
	}
	for {
		l, err := nextRecord(ctx, lr, n, &unterminated)
		if err != nil {
			b.end = err
			break
		}
		if l == nil {
			break
		}
		start := len(b.buf)
		b.buf = append(b.buf, l.Bytes...)
		b.spans = append(b.spans, [2]int{start, len(b.buf)})
		b.lines = append(b.lines, *l)
		n++
		if len(b.buf) >= batchBytes {
			if !send() {
				return 0
			}
			b = &batch{first: n, done: make(chan struct{}), buf: make([]byte, 0, batchBytes+batchBytes/4)}
		}
	}
	send()
	return unterminated
}

// parseBatch parses a batch's records with counts of its own, reusing
// prev's scanner, and returns the reader it used.
func (r *recordReader) parseBatch(b *batch, prev *recordReader) *recordReader {
	w := newRecordReader(r.in)
	if prev != nil {
		w.scan = prev.scan
	}
	b.rows = make([]table.InferenceRequest, 0, len(b.lines))
	for i := range b.lines {
		l := &b.lines[i]
		if err := w.parse(l.Bytes, b.first+int64(i), l.Offset); err != nil {
			b.fail = recordFailure(l, err)
			break
		}
		b.rows = append(b.rows, w.row)
	}
	b.counts = w
	close(b.done)
	return w
}
