package formats_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/collapsed"
	"github.com/flameox/flameox/internal/formats/perfscript"
	"github.com/flameox/flameox/internal/wire"
)

// repeated writes a file of at least size bytes: the fixture's lines that
// do not start with '#', repeated.
func repeated(b *testing.B, fixture string, size int) string {
	b.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", fixture))
	if err != nil {
		b.Fatal(err)
	}
	var body bytes.Buffer
	for _, ln := range bytes.SplitAfter(src, []byte("\n")) {
		if !bytes.HasPrefix(ln, []byte("#")) {
			body.Write(ln)
		}
	}
	if !bytes.HasSuffix(body.Bytes(), []byte("\n\n")) {
		body.WriteByte('\n')
	}
	p := filepath.Join(b.TempDir(), filepath.Base(fixture))
	if err := os.WriteFile(p, bytes.Repeat(body.Bytes(), size/body.Len()+1), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkReadPath decodes an explicit path the way the commands do:
// one open, detection from the peeked prefix, decoding and hashing in one
// read, with the hash on its own goroutine or inline on the reader.
// Compare the two with -bench ReadPath.
func BenchmarkReadPath(b *testing.B) {
	for _, c := range []struct {
		name, fixture string
		spec          *formats.Spec
	}{
		{"perf-script", "perf/hot.perf.txt", perfscript.ScriptSpec},
		{"collapsed", "collapsed/hot.folded", collapsed.Spec},
	} {
		path := repeated(b, c.fixture, 64<<20)
		for _, mode := range []struct {
			name   string
			inline bool
		}{{"concurrent", false}, {"inline", true}} {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				defer formats.HashInline(mode.inline)()
				st, _ := os.Stat(path)
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					src, err := formats.Open(path, "explicit")
					if err != nil {
						b.Fatal(err)
					}
					prefix, err := src.Prefix()
					if err != nil {
						b.Fatal(err)
					}
					if s, err := formats.Detect([]*formats.Spec{c.spec}, path, prefix, ""); err != nil || s != c.spec {
						b.Fatal(err)
					}
					w := wire.NewWriter(io.Discard)
					sink := &formats.StreamSink{W: w, Stamper: formats.Stamper{Spec: c.spec, Artifact: src.Artifact}}
					h := src.Hold(sink, func() error { return w.Write(src.Artifact) }, 0)
					if err := src.Run(context.Background(), c.spec, nil, nil, h); err != nil {
						b.Fatal(err)
					}
					if src.Artifact.ID == "" {
						b.Fatal("no digest")
					}
					src.Close()
				}
			})
		}
	}
}
