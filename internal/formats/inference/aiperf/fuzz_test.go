package aiperf

import (
	"testing"

	"github.com/flameox/flameox/internal/formats/inference/inferencetest"
)

func FuzzRecords(f *testing.F) {
	inferencetest.Seed(f, "aiperf/mock-0.13/profile_export.jsonl")
	inferencetest.Seed(f, "aiperf/run1-2025/profile_export.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, RecordsSpec, data) })
}

func FuzzAggregate(f *testing.F) {
	inferencetest.Seed(f, "aiperf/mock-0.13/profile_export_aiperf.json")
	inferencetest.Seed(f, "aiperf/run1-2025/profile_export_aiperf.json")
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, AggregateSpec, data) })
}

func FuzzCSV(f *testing.F) {
	inferencetest.Seed(f, "aiperf/mock-0.13/profile_export_aiperf.csv")
	inferencetest.Seed(f, "aiperf/run1-2025/profile_export_aiperf.csv")
	f.Fuzz(func(t *testing.T, data []byte) { inferencetest.Check(t, CSVSpec, data) })
}
