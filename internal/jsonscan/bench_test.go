package jsonscan

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// benchDoc is a real document from the repository's fixtures, repeated
// inside a JSON array to about 32 MB.
func benchDoc(b *testing.B, path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			b.Fatal(err)
		}
	}
	// A trace's events, or JSONL's records, as the elements.
	var trace struct{ TraceEvents []json.RawMessage }
	one := bytes.ReplaceAll(bytes.TrimSpace(raw), []byte("}\n{"), []byte("},{"))
	if json.Unmarshal(raw, &trace) == nil && len(trace.TraceEvents) > 0 {
		var evs [][]byte
		for _, e := range trace.TraceEvents {
			evs = append(evs, e)
		}
		one = bytes.Join(evs, []byte(","))
	}
	var doc bytes.Buffer
	doc.WriteString("[")
	for doc.Len() < 32<<20 {
		if doc.Len() > 1 {
			doc.WriteString(",")
		}
		doc.Write(one)
	}
	doc.WriteString("]")
	return doc.Bytes()
}

var benchDocs = []struct{ name, path string }{
	{"kineto", "../../testdata/kineto/hta-simple_add-a100.trace.json.gz"},
	{"aiperf", "../../testdata/aiperf/mock-0.13/profile_export.jsonl"},
}

// BenchmarkTokens reads every token of a document through a reader, as
// streaming decoders do: the tokenizer's own cost.
func BenchmarkTokens(b *testing.B) {
	for _, d := range benchDocs {
		b.Run(d.name, func(b *testing.B) {
			doc := benchDoc(b, d.path)
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				s := New(bytes.NewReader(doc))
				for {
					tok, err := s.Next()
					if err != nil {
						b.Fatal(err)
					}
					if tok.Kind == EOF {
						break
					}
				}
			}
		})
	}
}

// BenchmarkSkip skips each element of the document whole, checked as
// Next checks it: what a decoder pays for the values it does not read.
func BenchmarkSkip(b *testing.B) {
	for _, d := range benchDocs {
		b.Run(d.name, func(b *testing.B) {
			doc := benchDoc(b, d.path)
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				w := Walker{S: New(bytes.NewReader(doc))}
				if err := w.Array("doc", func(_ int, el Token) error { return w.Skip(el) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPick walks each element of the document picking the members
// whose key starts with a letter before 'm' (their values skipped too):
// the skip with stops, as a decoder reading a few fields pays it.
func BenchmarkPick(b *testing.B) {
	want := func(k []byte) bool { return len(k) > 0 && k[0] < 'm' }
	for _, d := range benchDocs {
		b.Run(d.name, func(b *testing.B) {
			doc := benchDoc(b, d.path)
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				w := Walker{S: New(bytes.NewReader(doc))}
				pick := func([]byte) error { return w.SkipValue() }
				err := w.Array("doc", func(_ int, el Token) error {
					if el.Kind != ObjectStart {
						return w.Skip(el)
					}
					return w.Pick(el, "element", want, pick)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
