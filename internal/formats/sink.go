package formats

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"slices"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

// Stamper fills in the parts of a decoder's table headers that the runtime
// owns: a table id unique per artifact, the format, the artifact id, the
// operation and the decoder identity.
type Stamper struct {
	Spec      *Spec
	Artifact  *evidence.Artifact
	Arguments evidence.Object // effective limits and options
	names     map[string]int
}

// Stamp completes t.
func (s *Stamper) Stamp(t *evidence.Table) {
	if s.names == nil {
		s.names = map[string]int{}
	}
	s.names[t.Name]++
	d := s.Artifact.Digest()
	if len(d) > 12 {
		d = d[:12]
	}
	// Two artifacts of one capture may hold the same bytes (an empty
	// stdout and an empty stderr): the role keeps their tables apart and
	// says which is which. An explicit path's role says nothing more.
	t.ID = d + "."
	if r := s.Artifact.Role; r != "" && r != RoleExplicit {
		t.ID += r + "."
	}
	t.ID += t.Name
	if n := s.names[t.Name]; n > 1 {
		t.ID += "#" + strconv.Itoa(n)
	}
	t.Format = s.Spec.Name
	t.ArtifactIDs = []string{s.Artifact.ID}
	if t.Operation == "" {
		t.Operation = "decode"
	}
	t.Decoder = evidence.Producer{Name: s.Spec.Name, Version: s.Spec.Version}
	if t.Evidence == "" {
		t.Evidence = evidence.Observed
	}
	if t.Arguments == nil {
		t.Arguments = s.Arguments
	}
}

// Schema returns the declared schema of a stamped table.
func (s *Stamper) Schema(t *evidence.Table) (*table.Schema, error) {
	if s.Artifact.ID == "" {
		// An explicit artifact's tables wait in a Hold for its digest.
		return nil, evidence.Failf(evidence.CodeInternal, "decoder %s begins table %s before the artifact's digest is known", s.Spec.Name, t.Name)
	}
	ts := table.Lookup(t.Name)
	if ts == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "decoder %s begins table %s, which package table does not declare", s.Spec.Name, t.Name)
	}
	return ts, nil
}

// StreamSink writes a decoder's tables to a block stream as they come.
type StreamSink struct {
	Stamper
	W *wire.Writer
}

// Wants implements Sink: a stream keeps every table.
func (s *StreamSink) Wants(*table.Schema) bool { return true }

// Begin implements Sink.
func (s *StreamSink) Begin(t *evidence.Table) (TableWriter, error) {
	s.Stamp(t)
	ts, err := s.Schema(t)
	if err != nil {
		return nil, err
	}
	if err := s.W.Write(t); err != nil {
		return nil, err
	}
	prefix, err := evidence.AppendRowPrefix(nil, t.ID)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "table %s", t.Name)
	}
	return &streamTable{w: s.W, t: t, enc: ts.Encoder(s.Artifact.ID), prefix: prefix}, nil
}

type streamTable struct {
	w      *wire.Writer
	t      *evidence.Table
	enc    *table.Encoder
	rows   int64
	prefix []byte // of every row's line (evidence.AppendRowPrefix)
}

// Row encodes the row once, straight from its typed form into the
// stream's buffer.
func (st *streamTable) Row(row any) error {
	var encErr error
	err := st.w.WriteFunc(func(dst []byte) ([]byte, error) {
		dst = append(dst, st.prefix...)
		dst, encErr = st.enc.Append(dst, row)
		return append(dst, '}'), encErr
	})
	if encErr != nil {
		return evidence.Wrap(evidence.CodeInternal, encErr, "table %s", st.t.Name)
	}
	st.rows++
	return err
}

// encoded writes a row whose values are already encoded canonically.
func (st *streamTable) encoded(values []byte) error {
	st.rows++
	return st.w.WriteFunc(func(dst []byte) ([]byte, error) {
		dst = append(dst, st.prefix...)
		dst = append(dst, values...)
		return append(dst, '}'), nil
	})
}

func (st *streamTable) End(s *evidence.Summary) error {
	s.TableID = st.t.ID
	s.RowsEmitted = st.rows
	return st.w.Write(s)
}

// DefaultHoldMemory is how much of a Hold stays in memory before it
// spills to an unlinked temporary file.
const DefaultHoldMemory = 8 << 20

// Hold is the sink of an explicit artifact whose digest is not known yet:
// the artifact block must precede its tables, and their table ids and
// artifact_id columns derive from the digest. Tables begun before the
// digest is known are kept (rows encoded, in memory up to a bound, then in
// an unlinked temporary file, so memory stays flat) and passed on to the
// next sink, after the artifact is announced, once it is. Decoders that
// emit only after reading to EOF find the digest known and go straight
// through: nothing is held.
type Hold struct {
	src      *Source
	next     Sink
	announce func() error
	spool    spool
	tables   []*heldTable
	released bool
	err      error
	// stream: the next sink writes a block stream, so held rows are kept
	// as the canonical values it will write, with placeholder in the
	// artifact column (patched at release, no second encoding). Another
	// sink gets the values back (see appendHeld).
	stream      bool
	placeholder []byte
}

// Hold returns the sink for decoding s into next. announce writes the
// artifact block; it is called once, when the digest is known, before any
// table reaches next. memory bounds what stays in memory (0: the default).
func (s *Source) Hold(next Sink, announce func() error, memory int) *Hold {
	if memory <= 0 {
		memory = DefaultHoldMemory
	}
	h := &Hold{src: s, next: next, announce: announce, spool: spool{max: memory}}
	if _, ok := next.(*StreamSink); ok {
		// The placeholder has the shape of an artifact id, so the patch
		// keeps every length; it is random per hold, so no input byte
		// can forge it, and it lies only where the sink put it.
		var nonce [32]byte
		rand.Read(nonce[:]) // never fails
		h.stream, h.placeholder = true, []byte("sha256:"+hex.EncodeToString(nonce[:]))
	}
	s.hold = h
	return h
}

// Held reports how many bytes of encoded tables were held, and how many of
// them spilled to disk.
func (h *Hold) Held() (bytes, spilled int64) { return h.spool.size, h.spool.spilled }

// Wants implements Sink: the next sink decides.
func (h *Hold) Wants(s *table.Schema) bool { return h.next.Wants(s) }

// Begin implements Sink.
func (h *Hold) Begin(t *evidence.Table) (TableWriter, error) {
	if h.src.complete {
		if err := h.flush(); err != nil {
			return nil, err
		}
		return h.next.Begin(t)
	}
	ts := table.Lookup(t.Name)
	if ts == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "a decoder begins table %s, which package table does not declare", t.Name)
	}
	ht := &heldTable{h: h, idx: len(h.tables), header: t, schema: ts, keep: h.next.Wants(ts)}
	h.tables = append(h.tables, ht)
	return ht, h.spool.put(recTable, ht.idx, nil)
}

// flush announces the artifact and passes every held table on, in the
// order the decoder wrote them.
func (h *Hold) flush() error {
	if h.released {
		return h.err
	}
	h.released = true
	if h.err = h.announce(); h.err != nil {
		return h.err
	}
	h.err = h.spool.replay(func(kind byte, idx int, payload []byte) error {
		if idx >= len(h.tables) {
			return evidence.Failf(evidence.CodeInternal, "held record names table %d of %d", idx, len(h.tables))
		}
		ht := h.tables[idx]
		switch kind {
		case recTable:
			tw, err := h.next.Begin(ht.header)
			ht.real = tw
			return err
		case recRow:
			if st, ok := ht.real.(*streamTable); ok && h.stream {
				id := []byte(h.src.Artifact.ID)
				if len(id) != len(h.placeholder) {
					return evidence.Failf(evidence.CodeInternal, "artifact id %q does not have the shape of its placeholder", id)
				}
				patch(payload, h.placeholder, id)
				return st.encoded(payload)
			}
			if h.stream {
				return evidence.Failf(evidence.CodeInternal, "held row of table %s for a stream that did not open it", ht.header.Name)
			}
			v, err := evidence.ParseValue(payload, 64)
			if err != nil {
				return evidence.Wrap(evidence.CodeInternal, err, "held row of table %s", ht.header.Name)
			}
			o, _ := v.(evidence.Object)
			return ht.real.Row(o)
		case recSummary:
			return ht.real.End(ht.sum)
		}
		return evidence.Failf(evidence.CodeInternal, "held record of kind %q", kind)
	})
	h.spool.close()
	return h.err
}

// discard drops what is held: the bytes it came from were not the
// artifact's.
func (h *Hold) discard() {
	h.released = true
	h.spool.close()
}

type heldTable struct {
	h      *Hold
	idx    int
	header *evidence.Table
	schema *table.Schema
	keep   bool // the next sink wants its rows
	sum    *evidence.Summary
	real   TableWriter // once released
	buf    []byte
	enc    *table.Encoder // of held rows for a stream
}

// Row checks the row against its schema, encodes its values with the
// artifact column left empty (the next sink fills it in) and holds them.
func (ht *heldTable) Row(row any) error {
	if err := ht.release(); err != nil || ht.real != nil {
		if err != nil {
			return err
		}
		return ht.real.Row(row)
	}
	if !ht.keep {
		return nil
	}
	var err error
	if ht.h.stream {
		if ht.enc == nil {
			ht.enc = ht.schema.Encoder(string(ht.h.placeholder))
		}
		ht.buf, err = ht.enc.Append(ht.buf[:0], row)
	} else {
		var o evidence.Object
		if o, err = ht.schema.Values(row, ""); err == nil {
			ht.buf, err = appendHeld(ht.buf[:0], o)
		}
	}
	if err != nil {
		return evidence.Wrap(evidence.CodeInternal, err, "table %s", ht.header.Name)
	}
	return ht.h.spool.put(recRow, ht.idx, ht.buf)
}

// patch replaces every occurrence of from in b with to, of the same
// length, in place.
func patch(b, from, to []byte) {
	for i := 0; ; {
		j := bytes.Index(b[i:], from)
		if j < 0 {
			return
		}
		copy(b[i+j:], to)
		i += j + len(from)
	}
}

// appendHeld encodes a row's values as JSON that reads back as the values
// a typed row gives: unlike the canonical encoding, an integer beyond the
// exact double range stays a number (a projection in process tells a
// number from a string), so a held row means what it would have meant
// passed on directly. Floats, strings and the rest are canonical.
func appendHeld(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case *big.Int:
		return x.Append(dst, 10), nil
	case json.Number:
		if !json.Valid([]byte(x)) {
			return dst, fmt.Errorf("invalid number %q", string(x))
		}
		return append(dst, x...), nil
	case evidence.Object:
		keys := slices.Sorted(maps.Keys(x))
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = evidence.AppendString(dst, k); err != nil {
				return dst, err
			}
			dst = append(dst, ':')
			if dst, err = appendHeld(dst, x[k]); err != nil {
				return dst, fmt.Errorf("%s: %w", k, err)
			}
		}
		return append(dst, '}'), nil
	case []any:
		return appendHeldArray(dst, x)
	case []int64:
		return appendHeldArray(dst, x)
	}
	return evidence.AppendCanonical(dst, v)
}

func appendHeldArray[T any](dst []byte, xs []T) ([]byte, error) {
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendHeld(dst, x); err != nil {
			return dst, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

func (ht *heldTable) End(s *evidence.Summary) error {
	if err := ht.release(); err != nil || ht.real != nil {
		if err != nil {
			return err
		}
		return ht.real.End(s)
	}
	ht.sum = s
	return ht.h.spool.put(recSummary, ht.idx, nil)
}

// release passes the held tables on once the digest is known.
func (ht *heldTable) release() error {
	if ht.real != nil || !ht.h.src.complete {
		return nil
	}
	return ht.h.flush()
}

// Held record kinds.
const (
	recTable   = 'T'
	recRow     = 'R'
	recSummary = 'S'
)

// spool is an append-only record log: in memory up to max bytes, then in
// a temporary file unlinked as soon as it is created, so nothing is left
// behind whatever happens to the process.
type spool struct {
	max     int
	mem     []byte
	f       *os.File
	w       *bufio.Writer
	size    int64 // bytes put
	spilled int64 // of which in the file
	hdr     []byte
	buf     []byte
}

func (sp *spool) put(kind byte, idx int, payload []byte) error {
	sp.hdr = append(sp.hdr[:0], kind)
	sp.hdr = binary.AppendUvarint(sp.hdr, uint64(idx))
	sp.hdr = binary.AppendUvarint(sp.hdr, uint64(len(payload)))
	n := len(sp.hdr) + len(payload)
	sp.size += int64(n)
	if sp.f == nil && len(sp.mem)+n > sp.max {
		if err := sp.spill(); err != nil {
			return err
		}
	}
	if sp.f == nil {
		sp.mem = append(append(sp.mem, sp.hdr...), payload...)
		return nil
	}
	sp.spilled += int64(n)
	sp.w.Write(sp.hdr)
	if _, err := sp.w.Write(payload); err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "hold tables in a temporary file")
	}
	return nil
}

func (sp *spool) spill() error {
	f, err := os.CreateTemp("", "flameox-hold-*")
	if err != nil {
		return evidence.Wrap(evidence.CodeIOFailure, err, "hold tables in a temporary file")
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return evidence.Wrap(evidence.CodeIOFailure, err, "unlink the temporary file")
	}
	sp.f, sp.w = f, bufio.NewWriterSize(f, 256<<10)
	sp.spilled += int64(len(sp.mem))
	sp.w.Write(sp.mem)
	sp.mem = nil
	return nil
}

// replay calls fn for every record in order.
func (sp *spool) replay(fn func(kind byte, idx int, payload []byte) error) error {
	var r *bufio.Reader
	if sp.f != nil {
		if err := sp.w.Flush(); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "hold tables in a temporary file")
		}
		if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read held tables")
		}
		r = bufio.NewReaderSize(sp.f, 256<<10)
	} else {
		r = bufio.NewReader(bytes.NewReader(sp.mem))
	}
	for {
		kind, err := r.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		idx, err1 := binary.ReadUvarint(r)
		n, err2 := binary.ReadUvarint(r)
		if err = errors.Join(err, err1, err2); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read held tables")
		}
		if uint64(cap(sp.buf)) < n {
			sp.buf = make([]byte, n)
		}
		sp.buf = sp.buf[:n]
		if _, err := io.ReadFull(r, sp.buf); err != nil {
			return evidence.Wrap(evidence.CodeIOFailure, err, "read held tables")
		}
		if err := fn(kind, int(idx), sp.buf); err != nil {
			return err
		}
	}
}

func (sp *spool) close() {
	if sp.f != nil {
		sp.f.Close()
		sp.f, sp.w = nil, nil
	}
	sp.mem, sp.buf = nil, nil
}
