// Package inferencetest is the fuzz harness the inference readers share:
// seeds cut from their real fixtures, and the check that any input either
// decodes into tables that keep the summary invariants or fails with a
// typed DECODE_FAILURE or LIMIT_EXCEEDED.
//
// It imports evidence, formats and formatstest.
package inferencetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// Seed adds the fixture's lines one by one (short seeds: the fuzzer
// minimizes with work quadratic in length), its first lines whole and cut,
// and its first 4 KiB.
func Seed(f *testing.F, rel string) {
	raw := formatstest.Read(f, rel)
	recs := bytes.SplitAfter(raw, []byte("\n"))
	for i, r := range recs {
		if len(r) > 0 && len(r) <= 4096 && i < 8 {
			f.Add(r)
		}
	}
	f.Add(raw[:min(len(raw), 4096)])
	head := bytes.Join(recs[:min(3, len(recs))], nil)
	f.Add(head[:len(head)*2/3])
}

// Check decodes data with spec and fails on anything but tables that keep
// the invariants or a typed decode or limit failure.
func Check(t *testing.T, spec *formats.Spec, data []byte) {
	spec.Sniff(data[:min(len(data), formats.SniffBytes)])
	s, err := formatstest.Decode(spec, "fuzz", data, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		var fl *evidence.Failure
		if !errors.As(err, &fl) || (fl.Code != evidence.CodeDecodeFailure && fl.Code != evidence.CodeLimitExceeded) {
			t.Fatalf("want a typed DECODE_FAILURE or LIMIT_EXCEEDED, got %v", err)
		}
	}
}
