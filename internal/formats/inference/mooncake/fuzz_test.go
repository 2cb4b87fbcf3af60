package mooncake

import (
	"testing"

	"github.com/flameox/flameox/internal/formats/inference/inferencetest"
)

func FuzzTrace(f *testing.F) {
	inferencetest.Seed(f, fixture)
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, Spec, data) })
}
