package chrometrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Generate writes a Chrome trace of at least size bytes built from a real
// one (seed, gzip'd or not): its top-level members as they are, then its
// events repeated, each round shifted in time past the one before, so
// the nesting, names and mix of the real trace scale up. Metadata (M)
// events are written once. It serves benchmarks (make bench), which need
// inputs far larger than a fixture.
func Generate(w io.Writer, seed []byte, size int64) error {
	if bytes.HasPrefix(seed, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(seed))
		if err != nil {
			return err
		}
		if seed, err = io.ReadAll(zr); err != nil {
			return err
		}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(seed, &doc); err != nil {
		return fmt.Errorf("generate: the seed must be a trace object: %w", err)
	}
	var events []map[string]json.RawMessage
	if err := json.Unmarshal(doc["traceEvents"], &events); err != nil {
		return fmt.Errorf("generate: traceEvents: %w", err)
	}
	// Each event as its text without ts, and its ts split at the point.
	type tmpl struct {
		rest      []byte
		whole     int64
		frac      string
		meta, has bool
	}
	var ts []tmpl
	var lo, hi int64
	for i, e := range events {
		var t tmpl
		if raw, ok := e["ts"]; ok {
			s := string(raw)
			ip, fp, _ := strings.Cut(s, ".")
			n, err := strconv.ParseInt(ip, 10, 64)
			if err != nil {
				return fmt.Errorf("generate: event %d: ts %s", i, s)
			}
			t.whole, t.frac, t.has = n, fp, true
			d, _ := strconv.ParseFloat(string(e["dur"]), 64)
			if len(ts) == 0 || n < lo {
				lo = n
			}
			hi = max(hi, n+int64(d)+1)
			delete(e, "ts")
		}
		t.meta = string(e["ph"]) == `"M"`
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		t.rest = b[1:] // after the opening brace
		ts = append(ts, t)
	}
	span := hi - lo + 1
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	put := func(b []byte) { n, _ := bw.Write(b); written += int64(n) }
	put([]byte("{"))
	for k, v := range doc {
		if k == "traceEvents" {
			continue
		}
		kb, _ := json.Marshal(k)
		put(kb)
		put([]byte(":"))
		put(v)
		put([]byte(",\n"))
	}
	put([]byte(`"traceEvents":[`))
	first := true
	var num []byte
	for round := int64(0); written < size || round == 0; round++ {
		for _, t := range ts {
			if t.meta && round > 0 {
				continue
			}
			if !first {
				put([]byte(",\n"))
			}
			first = false
			put([]byte("{"))
			if t.has {
				num = strconv.AppendInt(num[:0], t.whole+round*span, 10)
				put([]byte(`"ts":`))
				put(num)
				if t.frac != "" {
					put([]byte("." + t.frac))
				}
				if len(t.rest) > 1 {
					put([]byte(","))
				}
			}
			put(t.rest)
		}
	}
	put([]byte("]}\n"))
	return bw.Flush()
}
