package formats

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/wire"
)

// linesSpec decodes any text as observations.records, one row per line:
// as each line is read (stream) or after EOF (aggregate). During is
// called after the first line, to change the file under the decoder.
type linesDecoder struct {
	aggregate bool
	stopAfter int // stop reading after this many lines (0: read all)
	during    func()
	fail      error // returned after reading
}

func linesSpec(d *linesDecoder) *Spec {
	return &Spec{Name: "test-lines", Title: "test lines", Tables: []*table.Schema{table.ObservationRecords.Schema},
		Decoder: DecoderFunc(d.decode), Version: "1"}
}

func (d *linesDecoder) decode(ctx context.Context, in *Input, out Sink) error {
	var tw TableWriter
	begin := func() error {
		var err error
		tw, err = out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
		return err
	}
	if !d.aggregate {
		if err := begin(); err != nil {
			return err
		}
	}
	br := bufio.NewReaderSize(in.R, 4096)
	var lines []string
	for n := 0; d.stopAfter == 0 || n < d.stopAfter; n++ {
		line, err := br.ReadString('\n')
		if line != "" {
			if n == 0 && d.during != nil {
				d.during()
			}
			if d.aggregate {
				lines = append(lines, line)
			} else if err := tw.Row(row(n, line)); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if d.fail != nil {
		return d.fail
	}
	if d.aggregate {
		if err := begin(); err != nil {
			return err
		}
		for n, line := range lines {
			if err := tw.Row(row(n, line)); err != nil {
				return err
			}
		}
	}
	return tw.End(&evidence.Summary{Complete: true})
}

func row(n int, line string) *table.ObservationRecord {
	return &table.ObservationRecord{Line: int64(n + 1), Kind: "observation", Name: table.NonEmpty(strings.TrimSpace(line)), Value: int64(len(line))}
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func numbered(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "line %d of a test file\n", i)
	}
	return b.Bytes()
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// explicit decodes path as an explicit artifact through a Hold into a
// stream, and returns the stream and the hold.
func explicit(t *testing.T, spec *Spec, path string, memory int) (string, *Hold, error) {
	t.Helper()
	return explicitVia(t, spec, path, memory, false)
}

// opaque hides the stream sink's type, so that a hold in front of it
// keeps values, as it does for a projection in process.
type opaque struct{ Sink }

func explicitVia(t *testing.T, spec *Spec, path string, memory int, values bool) (string, *Hold, error) {
	t.Helper()
	src, err := Open(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	var sink Sink = &StreamSink{W: w, Stamper: Stamper{Spec: spec, Artifact: src.Artifact}}
	if values {
		sink = opaque{sink}
	}
	h := src.Hold(sink, func() error { return w.Write(src.Artifact) }, memory)
	err = src.Run(context.Background(), spec, nil, nil, h)
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	return buf.String(), h, err
}

// recorded decodes path as an artifact whose digest was recorded first.
func recorded(t *testing.T, spec *Spec, path string) (string, error) {
	t.Helper()
	a, err := ArtifactFromPath(path, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	if err := w.Write(a); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), spec, a, nil, nil, &StreamSink{W: w, Stamper: Stamper{Spec: spec, Artifact: a}})
	if ferr := w.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	return buf.String(), err
}

func TestOpenChecksTheDescriptor(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	regular := writeFile(t, "x.txt", []byte("hello\n"))
	cases := []struct {
		name, path string
		code       evidence.Code
	}{
		{"fifo", fifo, evidence.CodeInvalidArgument},
		{"directory", dir, evidence.CodeInvalidArgument},
		{"missing", filepath.Join(dir, "nope"), evidence.CodeIOFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := Open(c.path, "explicit")
				done <- err
			}()
			select {
			case err := <-done:
				var f *evidence.Failure
				if !errors.As(err, &f) || f.Code != c.code || f.Location.Path != c.path {
					t.Fatalf("got %v, want %s located at %s", err, c.code, c.path)
				}
				if c.code == evidence.CodeInvalidArgument && f.Message != "not a regular file" {
					t.Errorf("message %q", f.Message)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Open blocked")
			}
		})
	}
	src, err := Open(regular, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if a := src.Artifact; a.Size != 6 || a.ID != "" || a.Path != regular || a.Name != "x.txt" || src.Known() {
		t.Fatalf("artifact %+v", a)
	}
	// The artifact of a block gets the same check.
	if _, err := OpenArtifact(&evidence.Artifact{ID: digest(nil), Path: fifo}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Fatalf("artifact block naming a FIFO: %v", err)
	}
}

// A recorded size that differs from the file's fails before the decoder
// reads anything.
func TestRecordedSizeMismatch(t *testing.T) {
	p := writeFile(t, "x.txt", numbered(3))
	a, err := ArtifactFromPath(p, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	a.Size++
	called := false
	spec := &Spec{Name: "t", Decoder: DecoderFunc(func(context.Context, *Input, Sink) error { called = true; return nil })}
	_, err = OpenArtifact(a)
	if evidence.CodeOf(err) != evidence.CodeIntegrity {
		t.Fatalf("got %v", err)
	}
	if err := Run(context.Background(), spec, a, nil, nil, &StreamSink{}); evidence.CodeOf(err) != evidence.CodeIntegrity || called {
		t.Fatalf("got %v (decoder called: %v)", err, called)
	}
}

// Detection peeks at the same reader the decoder reads: the prefix is
// not consumed, and the digest covers it once.
func TestPrefixThenDecode(t *testing.T) {
	b := numbered(2000)
	p := writeFile(t, "x.txt", b)
	src, err := Open(p, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	prefix, err := src.Prefix()
	if err != nil || !bytes.Equal(prefix, b[:SniffBytes]) {
		t.Fatalf("prefix: %v", err)
	}
	var got []byte
	spec := &Spec{Name: "t", Decoder: DecoderFunc(func(_ context.Context, in *Input, out Sink) error {
		var err error
		got, err = io.ReadAll(in.R)
		return err
	})}
	h := src.Hold(&StreamSink{}, func() error { return nil }, 0)
	if err := src.Run(context.Background(), spec, nil, nil, h); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) || src.Artifact.ID != digest(b) {
		t.Fatalf("read %d of %d bytes, id %s", len(got), len(b), src.Artifact.ID)
	}
}

// The digest is the file's whether the decoder reads all of it, part of
// it or nothing, with the hash inline or on its own goroutine.
func TestDigestInOneRead(t *testing.T) {
	small := numbered(100)
	big := numbered(170000) // over concurrentFrom: hashed on its own goroutine
	if len(big) < concurrentFrom {
		t.Fatalf("big is %d bytes", len(big))
	}
	for _, inline := range []bool{false, true} {
		for _, c := range []struct {
			name string
			b    []byte
			d    linesDecoder
		}{
			{"all", small, linesDecoder{}},
			{"aggregate", big, linesDecoder{aggregate: true}},
			{"stream", big, linesDecoder{}},
			{"part", big, linesDecoder{stopAfter: 10}},
			{"stream small", small, linesDecoder{}},
		} {
			if c.name == "stream" && inline {
				continue // "stream small" streams inline; only a big file has a hasher goroutine
			}
			t.Run(fmt.Sprintf("%s/inline=%v", c.name, inline), func(t *testing.T) {
				defer func(v bool) { hashInline = v }(hashInline)
				hashInline = inline
				p := writeFile(t, "x.txt", c.b)
				d := c.d
				out, _, err := explicit(t, linesSpec(&d), p, 0)
				if err != nil {
					t.Fatal(err)
				}
				want := digest(c.b)
				if !strings.HasPrefix(out, `{"artifact_id":"`+want+`"`) {
					t.Fatalf("stream does not open with the artifact %s: %.200s", want, out)
				}
				// Rows carry the artifact id; tables take their id from it.
				if !strings.Contains(out, `"table_id":"`+want[7:19]+`.observations.records"`) ||
					!strings.Contains(out, `"values":{"artifact_id":"`+want+`"`) {
					t.Fatalf("ids not completed: %.400s", out)
				}
			})
		}
	}
}

// An explicit artifact's stream equals that of the same bytes decoded
// with a recorded digest, whether its tables were held in memory, spilled
// to disk, or not held at all.
func TestHoldReleasesTheSameStream(t *testing.T) {
	b := numbered(30000) // two chunks
	p := writeFile(t, "x.txt", b)
	for _, c := range []struct {
		name      string
		d         linesDecoder
		memory    int
		held      bool
		spilled   bool
		minHeldKB int64
		values    bool
	}{
		{"aggregate", linesDecoder{aggregate: true}, 0, false, false, 0, false},
		{"memory", linesDecoder{}, 0, true, false, 100, false},
		{"spilled", linesDecoder{}, 4 << 10, true, true, 100, false},
		{"values in memory", linesDecoder{}, 0, true, false, 100, true},
		{"values spilled", linesDecoder{}, 4 << 10, true, true, 100, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.d
			defer func(v bool) { hashInline = v }(hashInline)
			hashInline = true
			spec := linesSpec(&d)
			want, err := recorded(t, spec, p)
			if err != nil {
				t.Fatal(err)
			}
			got, h, err := explicitVia(t, spec, p, c.memory, c.values)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("held stream differs:\n%.300s\nwant\n%.300s", got, want)
			}
			held, spilled := h.Held()
			if (held >= c.minHeldKB<<10 && held > 0) != c.held || (spilled > 0) != c.spilled {
				t.Fatalf("held %d bytes, %d spilled", held, spilled)
			}
		})
	}
}

// A decoder failure still names the artifact (the rest of the file is
// hashed) and releases what was decoded before it, as a stream would have
// carried it; the failure is located at the artifact.
func TestFailureAfterHeldRows(t *testing.T) {
	defer func(v bool) { hashInline = v }(hashInline)
	hashInline = true
	b := numbered(100000)
	p := writeFile(t, "x.txt", b)
	d := &linesDecoder{stopAfter: 3, fail: errors.New("bad line 4")}
	out, _, err := explicit(t, linesSpec(d), p, 0)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure || f.Location.ArtifactID != digest(b) || f.Location.Path != p {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(out, `{"artifact_id":"`+digest(b)) || strings.Count(out, `"kind":"row"`) != 3 {
		t.Fatalf("stream: %s", out)
	}
}

// A file that changes while it is read is INTEGRITY_FAILURE, and nothing
// decoded from it is released.
func TestChangeDuringRead(t *testing.T) {
	b := numbered(170000) // over concurrentFrom
	for _, c := range []struct {
		name   string
		change func(path string) error
	}{
		{"append", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString("more\n")
			return err
		}},
		{"truncate", func(p string) error { return os.Truncate(p, int64(len(b)/2)) }},
		{"rewrite in place", func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("LINE"), int64(len(b)-100))
			return err
		}},
	} {
		for _, inline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inline=%v", c.name, inline), func(t *testing.T) {
				defer func(v bool) { hashInline = v }(hashInline)
				hashInline = inline
				p := writeFile(t, "x.txt", b)
				var cerr error
				d := &linesDecoder{during: func() { cerr = c.change(p) }}
				out, _, err := explicit(t, linesSpec(d), p, 0)
				if cerr != nil {
					t.Fatal(cerr)
				}
				if evidence.CodeOf(err) != evidence.CodeIntegrity {
					t.Fatalf("got %v", err)
				}
				if out != "" {
					t.Fatalf("released: %.200s", out)
				}
			})
		}
	}
	// A recorded artifact whose bytes differ (same size) fails at EOF.
	p := writeFile(t, "x.txt", b)
	a, err := ArtifactFromPath(p, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	a.ID = digest([]byte("other"))
	if _, err := recordedArtifact(a); evidence.CodeOf(err) != evidence.CodeIntegrity {
		t.Fatalf("got %v", err)
	}
}

func recordedArtifact(a *evidence.Artifact) (string, error) {
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	d := &linesDecoder{}
	spec := linesSpec(d)
	err := Run(context.Background(), spec, a, nil, nil, &StreamSink{W: w, Stamper: Stamper{Spec: spec, Artifact: a}})
	w.Flush()
	return buf.String(), err
}

// Decoders that need random access verify the descriptor: that is their
// one hash, and it names an explicit artifact.
func TestVerifyFile(t *testing.T) {
	b := numbered(1000)
	p := writeFile(t, "x.txt", b)
	var seen []byte
	spec := &Spec{Name: "t", Tables: []*table.Schema{table.ObservationRecords.Schema}, Decoder: DecoderFunc(func(_ context.Context, in *Input, out Sink) error {
		if err := in.VerifyFile(); err != nil {
			return err
		}
		seen = make([]byte, in.Artifact.Size)
		if _, err := in.File.ReadAt(seen, 0); err != nil {
			return err
		}
		tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
		if err != nil {
			return err
		}
		return tw.End(&evidence.Summary{Complete: true})
	})}
	out, h, err := explicit(t, spec, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if held, _ := h.Held(); held != 0 || !bytes.Equal(seen, b) || !strings.HasPrefix(out, `{"artifact_id":"`+digest(b)) {
		t.Fatalf("held %d, stream %.200s", held, out)
	}
	a, _ := ArtifactFromPath(p, "explicit")
	a.ID = digest([]byte("other"))
	if err := Run(context.Background(), spec, a, nil, nil, &StreamSink{W: wire.NewWriter(io.Discard), Stamper: Stamper{Spec: spec, Artifact: a}}); evidence.CodeOf(err) != evidence.CodeIntegrity {
		t.Fatalf("got %v", err)
	}
	// Streaming after verifying would read from a moved offset.
	both := &Spec{Name: "t", Decoder: DecoderFunc(func(_ context.Context, in *Input, out Sink) error {
		if err := in.VerifyFile(); err != nil {
			return err
		}
		_, err := io.ReadAll(in.R)
		return err
	})}
	if _, _, err := explicit(t, both, p, 0); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Fatalf("got %v", err)
	}
}

func TestRunDefects(t *testing.T) {
	p := writeFile(t, "x.txt", numbered(10))
	lazy := &Spec{Name: "lazy", Decoder: DecoderFunc(func(context.Context, *Input, Sink) error { return nil })}
	panics := &Spec{Name: "panics", Decoder: DecoderFunc(func(context.Context, *Input, Sink) error { panic("boom") })}
	for _, spec := range []*Spec{lazy, panics} {
		if _, _, err := explicit(t, spec, p, 0); evidence.CodeOf(err) != evidence.CodeInternal {
			t.Errorf("%s: got %v", spec.Name, err)
		}
	}
	// An explicit source needs a Hold: its tables would precede its id.
	src, err := Open(p, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Run(context.Background(), lazy, nil, nil, &StreamSink{}); evidence.CodeOf(err) != evidence.CodeInternal {
		t.Fatalf("got %v", err)
	}
}

// A cancelled decode announces nothing: the artifact was not read whole.
func TestCancelled(t *testing.T) {
	defer func(v bool) { hashInline = v }(hashInline)
	hashInline = true
	p := writeFile(t, "x.txt", numbered(5000))
	ctx, cancel := context.WithCancel(context.Background())
	spec := &Spec{Name: "t", Tables: []*table.Schema{table.ObservationRecords.Schema}, Decoder: DecoderFunc(func(ctx context.Context, in *Input, out Sink) error {
		tw, err := out.Begin(&evidence.Table{Name: table.ObservationRecords.Name, Columns: table.ObservationRecords.EvidenceColumns("")})
		if err != nil {
			return err
		}
		if err := tw.Row(row(0, "x")); err != nil {
			return err
		}
		cancel()
		return ctx.Err()
	})}
	src, err := Open(p, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	announced := false
	h := src.Hold(&StreamSink{W: wire.NewWriter(io.Discard)}, func() error { announced = true; return nil }, 0)
	if err := src.Run(ctx, spec, nil, nil, h); evidence.CodeOf(err) != evidence.CodeCancelled || announced {
		t.Fatalf("got %v, announced %v", err, announced)
	}
}

// The spool keeps records in order across the spill to disk.
func TestSpool(t *testing.T) {
	for _, max := range []int{1 << 20, 64} {
		sp := spool{max: max}
		for i := range 100 {
			if err := sp.put(recRow, i%7, []byte(strings.Repeat("x", i))); err != nil {
				t.Fatal(err)
			}
		}
		i := 0
		err := sp.replay(func(kind byte, idx int, payload []byte) error {
			if kind != recRow || idx != i%7 || len(payload) != i {
				return fmt.Errorf("record %d: kind %c idx %d len %d", i, kind, idx, len(payload))
			}
			i++
			return nil
		})
		if err != nil || i != 100 {
			t.Fatalf("max %d: %v after %d records", max, err, i)
		}
		if spilled := sp.spilled > 0; spilled != (max == 64) {
			t.Fatalf("max %d: spilled %d", max, sp.spilled)
		}
		sp.close()
	}
}

// Held rows read back as the values a typed row gives: big integers stay
// numbers, and the canonical encoding of what is read back is the
// canonical encoding of the original.
func TestHeldEncoding(t *testing.T) {
	big := json.Number("1180591620717411303424")
	v := evidence.Object{"big": big, "ts": int64(1796036123598834852), "f": 0.1, "nan": math.NaN(),
		"s": "é\"\n", "list": []any{big, "x", nil, true}, "ints": []int64{1, -2}, "nested": evidence.Object{"k": []string{"a"}}}
	b, err := appendHeld(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := evidence.ParseValue(b, 0)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	o := back.(evidence.Object)
	if o["big"] != big || o["ts"] != json.Number("1796036123598834852") || o["list"].([]any)[0] != big {
		t.Fatalf("numbers changed: %s", b)
	}
	want, _ := evidence.Canonical(v)
	got, _ := evidence.Canonical(back)
	if !bytes.Equal(got, want) {
		t.Fatalf("canonical forms differ:\n%s\n%s", got, want)
	}
	if _, err := appendHeld(nil, json.Number("12abc")); err == nil {
		t.Fatal("an invalid number was encoded")
	}
}
