package v8heap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

const testdata = "../../../testdata/v8heap"

var fixtures = []string{"node20-app.heapprofile", "node10-speedscope.heapprofile", "crafted-unresolved.heapprofile"}

// jsonNode is the independent reading: encoding/json, not our scanner.
type jsonNode struct {
	CallFrame struct {
		FunctionName string `json:"functionName"`
		ScriptID     string `json:"scriptId"`
		URL          string `json:"url"`
		LineNumber   int64  `json:"lineNumber"`
		ColumnNumber int64  `json:"columnNumber"`
	} `json:"callFrame"`
	SelfSize int64       `json:"selfSize"`
	ID       *int64      `json:"id"`
	Children []*jsonNode `json:"children"`
}

type jsonProfile struct {
	Head    *jsonNode `json:"head"`
	Samples []struct {
		Size   int64 `json:"size"`
		NodeID int64 `json:"nodeId"`
	} `json:"samples"`
}

type ident struct {
	function, script, url string
	line, column          int64
}

// independent counts over the file: per frame identity the selfSize sum
// and the sample records of its nodes, and the totals.
func independent(t *testing.T, name string) (self map[ident][2]int64, treeBytes, samples, unresolved, unresolvedBytes int64) {
	t.Helper()
	var p jsonProfile
	if err := json.Unmarshal(formatstest.Read(t, "v8heap/"+name), &p); err != nil {
		t.Fatal(err)
	}
	self = map[ident][2]int64{}
	byID := map[int64]ident{}
	var walk func(n *jsonNode)
	walk = func(n *jsonNode) {
		k := ident{n.CallFrame.FunctionName, n.CallFrame.ScriptID, n.CallFrame.URL, n.CallFrame.LineNumber, n.CallFrame.ColumnNumber}
		v := self[k]
		v[0] += n.SelfSize
		self[k] = v
		treeBytes += n.SelfSize
		if n.ID != nil {
			byID[*n.ID] = k
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Head)
	for _, s := range p.Samples {
		samples++
		k, ok := byID[s.NodeID]
		if !ok {
			unresolved++
			unresolvedBytes += s.Size
			continue
		}
		v := self[k]
		v[1]++
		self[k] = v
	}
	return
}

func decodeFile(t *testing.T, name string) *formatstest.Table {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, name), nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	return s.Table(table.MemoryFrames.Name)
}

func metric(s *evidence.Summary, name string) int64 {
	v, _ := evidence.AsInt(s.Metrics[name].Value)
	return v
}

// TestEqualsIndependentCount: totals, per-frame self bytes and sample
// counts equal a count over the file by encoding/json.
func TestEqualsIndependentCount(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			want, treeBytes, samples, unres, unresB := independent(t, name)
			tab := decodeFile(t, name)
			s := tab.Summary
			if got := metric(s, table.MetricPopulationBytes); got != treeBytes {
				t.Errorf("population bytes %d, file %d", got, treeBytes)
			}
			hasSamples := !strings.Contains(name, "node10")
			if hasSamples {
				if got := metric(s, "samples"); got != samples {
					t.Errorf("samples %d, file %d", got, samples)
				}
				if metric(s, "unresolved_sample_count") != unres || metric(s, "unresolved_sampled_bytes") != unresB {
					t.Errorf("unresolved %v/%v, file %d/%d", s.Metrics["unresolved_sample_count"], s.Metrics["unresolved_sampled_bytes"], unres, unresB)
				}
				if (unres > 0) == s.Complete {
					t.Errorf("%d unresolved samples, complete=%v", unres, s.Complete)
				}
			}
			// Rows carry no scriptId; the frame id hashes it, so map ids to
			// scripts through the same identities.
			scripts := map[string]string{}
			for k := range want {
				id, _ := callFrame{Function: k.function, ScriptID: k.script, URL: k.url, Line: k.line, Column: k.column}.ID(nil)
				scripts[id] = k.script
			}
			if len(tab.Rows) != len(want) {
				t.Errorf("%d rows, %d frame identities in the file", len(tab.Rows), len(want))
			}
			for _, r := range tab.Rows {
				file, _ := r["file"].(string)
				line, _ := evidence.AsInt(r["line"])
				col, _ := evidence.AsInt(r["column"])
				k := ident{r["function"].(string), scripts[r["frame_id"].(string)], file, line, col}
				selfB, _ := evidence.AsInt(r["self_bytes"])
				if selfB != want[k][0] {
					t.Errorf("%+v: self_bytes %d, file %d", k, selfB, want[k][0])
				}
				n, ok := evidence.AsInt(r["self_count"])
				switch {
				case !hasSamples && r["self_count"] != nil:
					t.Errorf("%+v: a count where the file records none", k)
				case hasSamples && (!ok || n != want[k][1]):
					t.Errorf("%+v: self_count %v, file %d", k, r["self_count"], want[k][1])
				}
			}
		})
	}
}

// TestCrafted checks inclusive values by hand on the crafted file:
// recursion (main under main) counts once, unresolved samples stay out of
// the frames but in the totals.
func TestCrafted(t *testing.T) {
	tab := decodeFile(t, "crafted-unresolved.heapprofile")
	got := map[string]string{}
	for _, r := range tab.Rows {
		got[r["function"].(string)] = fmt.Sprintf("%v/%v %v/%v", r["self_bytes"], r["inclusive_bytes"], r["self_count"], r["inclusive_count"])
	}
	want := map[string]string{"(root)": "0/5150 0/5", "main": "150/5150 2/5", "alloc": "5000/5000 3/3"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	s := tab.Summary
	if metric(s, "samples") != 7 || metric(s, "sampled_bytes") != 568 || metric(s, "unresolved_sample_count") != 2 || metric(s, "unresolved_sampled_bytes") != 272 || s.Complete {
		t.Errorf("summary %v complete=%v", s.Metrics, s.Complete)
	}
	if !strings.Contains(strings.Join(s.Limitations, "\n"), "attributed to no frame") {
		t.Errorf("no attribution limitation: %v", s.Limitations)
	}
}

// TestNode20Frames: Node 20 writes its user module frames with an empty
// url and line -1; they are unresolved, not invented.
func TestNode20Frames(t *testing.T) {
	tab := decodeFile(t, "node20-app.heapprofile")
	var unresolved, symbolized int
	for _, r := range tab.Rows {
		switch r["symbolization"] {
		case table.Unresolved:
			unresolved++
			if r["file"] != nil {
				t.Errorf("unresolved frame with a file: %v", r)
			}
		case table.Symbolized:
			symbolized++
		}
	}
	if unresolved == 0 || symbolized == 0 {
		t.Errorf("%d unresolved, %d symbolized frames", unresolved, symbolized)
	}
}

func TestMalformed(t *testing.T) {
	head := `{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1`
	for name, doc := range map[string]string{
		"children object":   `{"head":` + head + `,"children":{}}}`,
		"children of ints":  `{"head":` + head + `,"children":[1]}}`,
		"duplicate field":   `{"head":` + head + `,"selfSize":1,"children":[]}}`,
		"duplicate head":    `{"head":` + head + `,"children":[]},"head":` + head + `,"children":[]}}`,
		"dotted key":        `{"head.callFrame":{},"samples":[]}`,
		"no selfSize":       `{"head":{"callFrame":{"functionName":"x"},"children":[]}}`,
		"negative size":     `{"head":` + head + `,"children":[]},"samples":[{"size":-1,"nodeId":1}]}`,
		"duplicate node id": `{"head":` + head + `,"children":[` + head + `,"children":[]}]}}`,
	} {
		_, err := formatstest.Run(t, Spec, "x.heapprofile", []byte(doc), nil, nil)
		if evidence.CodeOf(err) != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestReadersAndLimits(t *testing.T) {
	data := formatstest.Read(t, "v8heap/node20-app.heapprofile")
	want, err := formatstest.Decode(Spec, "a.heapprofile", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader} {
		got, err := formatstest.Decode(Spec, "a.heapprofile", data, nil, wrap)
		if err != nil || formatstest.Canonical(t, got.Tables[0].Rows) != formatstest.Canonical(t, want.Tables[0].Rows) {
			t.Errorf("iotest reader: %v", err)
		}
	}
	for _, lim := range []string{LimitNodes, LimitSamples, LimitDepth} {
		_, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, "node20-app.heapprofile"), map[string]int64{lim: 3}, nil)
		if evidence.CodeOf(err) != evidence.CodeLimitExceeded {
			t.Errorf("%s=3: %v", lim, err)
		}
	}
	// The Node 10 profile is complete (no samples to leave unresolved).
	full, _ := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, "node10-speedscope.heapprofile"), nil, nil)
	cut, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, "node10-speedscope.heapprofile"), nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

func TestSniff(t *testing.T) {
	for _, name := range fixtures {
		data := formatstest.Read(t, "v8heap/"+name)
		if v := Spec.Sniff(data[:min(len(data), formats.SniffBytes)]); v != formats.Yes {
			t.Errorf("%s: sniff %v", name, v)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range fixtures {
		f.Add(formatstest.Read(f, "v8heap/"+name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/virtual/fuzz.heapprofile", Size: int64(len(data))},
			bytes.NewReader(data), map[string]int64{LimitDepth: 200}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &formatstest.Sink{}
		if err := Spec.Decoder.Decode(context.Background(), in, s); err != nil {
			return // the runner types scanner errors as DECODE_FAILURE
		}
		formatstest.CheckInvariants(t, s, nil)
	})
}

func BenchmarkDecode(b *testing.B) {
	data := formatstest.Read(b, "v8heap/node20-app.heapprofile")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, Spec, &evidence.Artifact{Path: "/virtual/a.heapprofile", Size: int64(len(data))}, bytes.NewReader(data), nil)
		if err := Spec.Decoder.Decode(context.Background(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
