package servebench

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

func benchDecode(b *testing.B, spec *formats.Spec, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, spec, nil, bytes.NewReader(data), nil)
		var rows int64
		if err := spec.Decoder.Decode(context.Background(), in, formatstest.Discard{Rows: &rows}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVLLMDetailed decodes the detailed result, its object repeated
// (as --append-result writes) to about 8 MiB.
func BenchmarkVLLMDetailed(b *testing.B) {
	src := formatstest.Read(b, "vllm/detailed.json")
	benchDecode(b, VLLMSpec, bytes.Repeat(append(src, '\n'), 8<<20/len(src)+1))
}

// BenchmarkSGLang decodes SGLang's real two-run file repeated to 8 MiB.
func BenchmarkSGLang(b *testing.B) {
	src := formatstest.Read(b, "sglang/bench_serving.jsonl")
	benchDecode(b, SGLangSpec, bytes.Repeat(src, 8<<20/len(src)+1))
}
