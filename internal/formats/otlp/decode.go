package otlp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
)

var gzipMagic = []byte{0x1f, 0x8b}

// replayCap bounds the bytes kept while JSON is tried, for reading them
// again as protobuf: protobuf bytes fail as JSON within a few bytes, so
// a JSON failure past this point is a JSON document's own.
const replayCap = 1 << 20

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if err := in.CheckSize(); err != nil {
		return err
	}
	br := bufio.NewReaderSize(formats.FileReader(in.R), 256<<10)
	var src io.Reader = br
	d := newDecoder(ctx, in, out)
	if p, _ := br.Peek(2); bytes.Equal(p, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return evidence.Wrap(evidence.CodeDecodeFailure, err, "%s: gzip", in.Spec.Title)
		}
		defer zr.Close()
		src, d.compressed = zr, true
	}
	lim := in.Decompressed(src)
	zb := bufio.NewReaderSize(lim, 64<<10)
	if !looksJSON(zb) {
		d.encoding = encProtobuf
		if err := d.protobuf(zb); err != nil {
			return d.abort(in.Typed(err, lim.Over))
		}
		return d.end()
	}
	rec := &recorder{r: zb}
	d.encoding = encJSON
	jerr := d.json(rec)
	if jerr == nil {
		return d.end()
	}
	jerr = in.Typed(jerr, lim.Over)
	if d.jsonRead || d.spans > 0 || rec.overflow || lim.Over != nil || rec.readErr || isLimit(jerr) {
		return d.abort(jerr)
	}
	// Nothing was read as JSON: the bytes may be protobuf that happens
	// to begin like JSON.
	d.reset()
	d.encoding = encProtobuf
	d.triedJSON = jerr.Error()
	perr := d.protobuf(io.MultiReader(bytes.NewReader(rec.buf), zb))
	if perr == nil {
		return d.end()
	}
	perr = in.Typed(perr, lim.Over)
	var f *evidence.Failure
	if errors.As(jerr, &f) && f.Code == evidence.CodeDecodeFailure && !isLimit(perr) {
		f.Message += "; read as protobuf instead: " + perr.Error()
		return d.abort(f)
	}
	return d.abort(perr)
}

func isLimit(err error) bool {
	var f *evidence.Failure
	return errors.As(err, &f) && f.Code == evidence.CodeLimitExceeded
}

// looksJSON says whether the stream opens a JSON object: its first
// non-blank byte is '{'.
func looksJSON(br *bufio.Reader) bool {
	for n := 1; ; n++ {
		p, err := br.Peek(n)
		if len(p) < n {
			return false
		}
		switch p[n-1] {
		case ' ', '\t', '\r', '\n':
			if err != nil || n >= 4096 {
				return false
			}
			continue
		case '{':
			return true
		}
		return false
	}
}

// recorder keeps what passes through it, up to replayCap.
type recorder struct {
	r        io.Reader
	buf      []byte
	overflow bool
	readErr  bool
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.readErr = true
	}
	if !r.overflow {
		if len(r.buf)+n > replayCap {
			r.overflow, r.buf = true, nil
		} else {
			r.buf = append(r.buf, p[:n]...)
		}
	}
	return n, err
}
