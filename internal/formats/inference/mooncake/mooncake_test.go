package mooncake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

const fixture = "mooncake/synthetic_trace.jsonl"

// The counts equal an independent count made with encoding/json: records,
// tokens, blocks, blocks an earlier request had, distinct blocks.
func TestCountsEqualIndependentCount(t *testing.T) {
	data := formatstest.Read(t, fixture)
	var n, in, out, blocks, reused int64
	seen := map[int64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Timestamp    int64   `json:"timestamp"`
			InputLength  int64   `json:"input_length"`
			OutputLength int64   `json:"output_length"`
			HashIDs      []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		in += rec.InputLength
		out += rec.OutputLength
		for _, h := range rec.HashIDs {
			if seen[h] {
				reused++
			}
		}
		for _, h := range rec.HashIDs {
			seen[h] = true
		}
		blocks += int64(len(rec.HashIDs))
	}
	s, err := formatstest.DecodeFile(t, Spec, filepath.Join(formatstest.Testdata(), fixture), nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Table(table.InferenceRequests.Name).Summary.Metrics
	for k, want := range map[string]int64{"requests": n, "input_tokens": in, "output_tokens": out, "blocks": blocks, "reused_blocks": reused, "distinct_blocks": int64(len(seen))} {
		if got, _ := evidence.AsInt(m[k].Value); got != want {
			t.Errorf("%s = %d, independent count %d", k, got, want)
		}
	}
	if r := m["prefix_reuse_ratio"].Value; r != float64(reused)/float64(blocks) {
		t.Errorf("ratio %v", r)
	}
	var rowBlocks, rowReused int64
	for _, r := range s.Table(table.InferenceRequests.Name).Rows {
		b, _ := evidence.AsInt(r["blocks"])
		u, _ := evidence.AsInt(r["reused_blocks"])
		rowBlocks += b
		rowReused += u
	}
	if rowBlocks != blocks || rowReused != reused {
		t.Errorf("rows sum to %d blocks, %d reused", rowBlocks, rowReused)
	}
}

// No hash value reaches a row: the rows have no column for one.
func TestHashesNeverEmitted(t *testing.T) {
	data := []byte(`{"timestamp": 5, "input_length": 10, "output_length": 2, "hash_ids": [987654321987, 123456789123]}` + "\n" +
		`{"timestamp": 9, "input_length": 10, "output_length": 2, "hash_ids": [987654321987, 555]}` + "\n")
	s, err := formatstest.Decode(Spec, "t.jsonl", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range s.Tables {
		for _, r := range tb.Rows {
			c := formatstest.Canonical(t, r)
			for _, h := range []string{"987654321987", "123456789123", "555"} {
				if strings.Contains(c, h) {
					t.Errorf("%s holds hash %s: %s", tb.Header.Name, h, c)
				}
			}
		}
	}
	reqs := s.Table(table.InferenceRequests.Name).Rows
	if reqs[1]["reused_blocks"] != int64(1) || reqs[1]["start"] != int64(9_000_000) {
		t.Errorf("second request %v", reqs[1])
	}
}

func TestSniffAndFailures(t *testing.T) {
	b := formatstest.Read(t, fixture)
	if Spec.Sniff(b[:formats.SniffBytes]) != formats.Yes {
		t.Error("the trace is not recognized")
	}
	if Spec.Sniff([]byte(`{"metadata":{},"metrics":{}}`+"\n")) != formats.No {
		t.Error("an AIPerf record was claimed")
	}
	for _, bad := range []string{`{"timestamp": 1}`, `{"timestamp": -1, "input_length": 2}`, `{"timestamp": 1, "input_length": 2, "hash_ids": ["x"]}`, `nope`} {
		s, err := formatstest.Decode(Spec, "t.jsonl", []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}`+"\n"+bad+"\n"), nil, nil)
		formatstest.CheckInvariants(t, s, err)
		if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeDecodeFailure || f.Location.Line != 2 {
			t.Errorf("%s: %v", bad, err)
		}
	}
	_, err := formatstest.Run(t, Spec, "t.jsonl", b, map[string]int64{LimitBlocks: 100}, nil)
	if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeLimitExceeded {
		t.Errorf("over max_distinct_blocks: %v", err)
	}
	want, _ := formatstest.Decode(Spec, "t.jsonl", b, nil, nil)
	got, err := formatstest.Decode(Spec, "t.jsonl", b, nil, iotest.HalfReader)
	if err != nil || len(got.Table(table.InferenceRequests.Name).Rows) != len(want.Table(table.InferenceRequests.Name).Rows) {
		t.Errorf("half reads: %v", err)
	}
}
