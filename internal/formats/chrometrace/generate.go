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
// events are written once. The ids that join events (flow ids, Kineto's
// correlation, External id and Ev Idx args) are renumbered per round by
// one stride past the seed's largest, so links stay within their round
// and keep their equalities (a runtime call's correlation is its ac2g
// flow's id), as one long real run would number them. It serves
// benchmarks (make bench), which need inputs far larger than a fixture.
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
	// Each event as its text without ts, and its ts split at the point;
	// the text is cut around the ids renumbered per round.
	type tmpl struct {
		rest      []byte
		whole     int64
		frac      string
		meta, has bool
		cuts      []idCut
	}
	var ts []tmpl
	var lo, hi, maxID int64
	for i, e := range events {
		var t tmpl
		ids, err := takeIDs(e)
		if err != nil {
			return fmt.Errorf("generate: event %d: %w", i, err)
		}
		for _, v := range ids {
			maxID = max(maxID, v)
		}
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
		t.rest, t.cuts = cutIDs(b[1:], ids) // after the opening brace
		ts = append(ts, t)
	}
	span := hi - lo + 1
	stride := maxID + 1
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
			at := 0
			for _, c := range t.cuts {
				put(t.rest[at:c.at])
				num = strconv.AppendInt(num[:0], c.id+round*stride, 10)
				put(num)
				at = c.at
			}
			put(t.rest[at:])
		}
	}
	put([]byte("]}\n"))
	return bw.Flush()
}

// idArgs are the Kineto args that join events: a runtime call to its
// device work (correlation), ops to their launches (External id), and
// the profiler's event index.
var idArgs = []string{"correlation", "External id", "Ev Idx"}

// idMark opens the placeholder string an id is marshalled as, followed
// by its index; the generator cuts the marshalled text there.
const idMark = `"@@flameox-id-`

// idCut is where in an event's text an id goes, and its seed value.
type idCut struct {
	at int
	id int64
}

// takeIDs replaces the event's integral join ids (a flow's id, the
// idArgs) with numbered placeholders and returns their values in order.
func takeIDs(e map[string]json.RawMessage) ([]int64, error) {
	var ids []int64
	mark := func(raw json.RawMessage) (json.RawMessage, bool) {
		v, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || v < 0 {
			return raw, false // a string or non-integral id stays as it is
		}
		ids = append(ids, v)
		return json.RawMessage(idMark + strconv.Itoa(len(ids)-1) + `"`), true
	}
	switch string(e["ph"]) {
	case `"s"`, `"t"`, `"f"`:
		if raw, ok := e["id"]; ok {
			e["id"], _ = mark(raw)
		}
	}
	if raw, ok := e["args"]; ok && len(raw) > 0 && raw[0] == '{' {
		var args map[string]json.RawMessage
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		changed := false
		for _, k := range idArgs {
			if v, ok := args[k]; ok {
				var m bool
				args[k], m = mark(v)
				changed = changed || m
			}
		}
		if changed {
			b, err := json.Marshal(args)
			if err != nil {
				return nil, err
			}
			e["args"] = b
		}
	}
	return ids, nil
}

// cutIDs removes the placeholders takeIDs put in text and returns the
// text left and where each id goes, in text order.
func cutIDs(text []byte, ids []int64) ([]byte, []idCut) {
	if len(ids) == 0 {
		return text, nil
	}
	var out []byte
	var cuts []idCut
	for {
		i := bytes.Index(text, []byte(idMark))
		if i < 0 {
			break
		}
		j := bytes.IndexByte(text[i+1:], '"') + i + 1
		k, _ := strconv.Atoi(string(text[i+len(idMark) : j]))
		out = append(out, text[:i]...)
		cuts = append(cuts, idCut{at: len(out), id: ids[k]})
		text = text[j+1:]
	}
	return append(out, text...), cuts
}
