package servebench

import (
	"testing"

	"github.com/flameox/flameox/internal/formats/inference/inferencetest"
)

func FuzzVLLM(f *testing.F) {
	inferencetest.Seed(f, "vllm/detailed.json")
	inferencetest.Seed(f, "vllm/llm-d-H100-vllm-2replicas-benchmark_2025-05-13_04-55-27.json")
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, VLLMSpec, data) })
}

func FuzzSGLang(f *testing.F) {
	inferencetest.Seed(f, "sglang/bench_serving.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, SGLangSpec, data) })
}
