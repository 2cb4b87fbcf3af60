package sanitizer

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

func decodeXMLBytes(t testing.TB, data []byte, opts evidence.Object, wrap func(io.Reader) io.Reader) (*formatstest.Table, error) {
	t.Helper()
	s, err := formatstest.Decode(XMLSpec, "r.sanitizer.xml", data, opts, wrap)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		return nil, err
	}
	return s.Table("gpu.sanitizer_findings"), nil
}

// ownXMLCount is an independent count: <kind> elements of records that
// are not launch logs.
func ownXMLCount(data []byte) int {
	n := 0
	for _, m := range regexp.MustCompile(`<kind>([^<]*)</kind>`).FindAllSubmatch(data, -1) {
		if string(m[1]) != "LaunchInfo" {
			n++
		}
	}
	return n
}

func TestXMLFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testdata, "*.sanitizer.xml"))
	if len(files) < 4 {
		t.Fatal(files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if sniffXML(data) != formats.Yes || sniff(data) == formats.Yes {
				t.Error("sniffers disagree on an XML report")
			}
			tb, err := decodeXMLBytes(t, data, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := ownXMLCount(data); len(tb.Rows) != want {
				t.Errorf("%d rows, the independent count finds %d records", len(tb.Rows), want)
			}
			if !tb.Summary.Complete {
				t.Errorf("incomplete: %v", tb.Summary.Limitations)
			}
			for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader} {
				again, err := decodeXMLBytes(t, data, nil, wrap)
				if err != nil || formatstest.Canonical(t, again.Rows) != formatstest.Canonical(t, tb.Rows) {
					t.Errorf("rows differ through a short reader: %v", err)
				}
			}
		})
	}
}

// The XML and text reports of the same run give the same findings.
func TestXMLMatchesText(t *testing.T) {
	x, err := decodeXMLBytes(t, formatstest.Read(t, "sanitizer/memcheck-demo.sanitizer.xml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	txt := decodeBytes(t, "memcheck-demo.txt", formatstest.Read(t, "sanitizer/memcheck-demo.txt"), nil, nil)
	if len(x.Rows) != len(txt.Rows) {
		t.Fatalf("%d XML rows, %d text rows", len(x.Rows), len(txt.Rows))
	}
	for i := range x.Rows {
		a, b := x.Rows[i], txt.Rows[i]
		for _, k := range []string{"kind", "tool", "severity", "message", "access", "size_bytes", "kernel", "pc", "file",
			"source_line", "thread_x", "thread_y", "thread_z", "block_x", "block_y", "block_z", "address"} {
			if a[k] != b[k] {
				t.Errorf("row %d %s: xml %v, text %v", i, k, a[k], b[k])
			}
		}
		ah, bh := a["host_frames"].([]any), b["host_frames"].([]any)
		if len(ah) != len(bh) || len(a["device_frames"].([]any)) != len(b["device_frames"].([]any)) {
			t.Fatalf("row %d frames: %v / %v", i, a, b)
		}
		for j := range ah {
			fa, fb := ah[j].(evidence.Object), bh[j].(evidence.Object)
			if fa["function"] != fb["function"] || fa["offset"] != fb["offset"] || fa["module"] != fb["module"] {
				t.Errorf("row %d host frame %d: %v vs %v", i, j, fa, fb)
			}
		}
	}
	dev := x.Rows[1]["device_frames"].([]any)[0].(evidence.Object)
	if dev["function"] != "out_of_bounds_kernel()" || dev["line"] != int64(44) || dev["offset"] != "0x30" {
		t.Errorf("device frame %v", dev)
	}
}

func want(t *testing.T, r evidence.Object, w evidence.Object) {
	t.Helper()
	for k, v := range w {
		if r[k] != v {
			t.Errorf("%s = %v, want %v (row %v)", k, r[k], v, r)
		}
	}
}

func TestXMLKinds(t *testing.T) {
	api, _ := decodeXMLBytes(t, formatstest.Read(t, "sanitizer/api-error.sanitizer.xml"), nil, nil)
	want(t, api.Rows[0], evidence.Object{"kind": "api_error", "api": "cudaMalloc", "api_error": "cudaErrorMemoryAllocation",
		"api_result": int64(2), "tool": nil, "host_backtrace": "saved"})
	if h := api.Rows[0]["host_frames"].([]any); len(h) != 3 || h[0].(evidence.Object)["module"] != "libcuda.so.1" {
		t.Errorf("%v", h)
	}
	race, _ := decodeXMLBytes(t, formatstest.Read(t, "sanitizer/racecheck-hazard.sanitizer.xml"), evidence.Object{optTool: "racecheck"}, nil)
	r, h := race.Rows[0], race.Rows[1]
	want(t, r, evidence.Object{"kind": "race", "hazards": int64(508), "source_line": int64(41), "access": "write", "severity": "error", "tool": "racecheck"})
	if !strings.Contains(strings.Join(anyStrings(r["details"].([]any)), "\n"), "destination/line: 51") {
		t.Errorf("details %v", r["details"])
	}
	want(t, h, evidence.Object{"kind": "hazard", "severity": "warning", "thread_x": int64(1), "kernel": "sumKernel(int *, int *)", "memory_space": "shared"})
	is, _ := decodeXMLBytes(t, formatstest.Read(t, "sanitizer/initcheck-synccheck.sanitizer.xml"), nil, nil)
	want(t, is.Rows[0], evidence.Object{"kind": "uninitialized_access", "tool": "initcheck", "thread_x": int64(122), "kernel": "mult(int *, int *, int)", "pc": "0x60"})
	want(t, is.Rows[1], evidence.Object{"kind": "barrier_error", "tool": "synccheck", "thread_x": int64(32), "source_line": int64(42)})
	if is.Summary.Coverage["launch_records"] != int64(1) || len(is.Rows) != 2 {
		t.Errorf("%v", is.Summary.Coverage)
	}
}

func isCode(err error, code evidence.Code) bool {
	var f *evidence.Failure
	return errors.As(err, &f) && f.Code == code
}

// Every cut of a report is rows and a stated incompleteness, or a typed
// failure before the root; never a panic or a complete claim.
func TestXMLCut(t *testing.T) {
	data := formatstest.Read(t, "sanitizer/memcheck-demo.sanitizer.xml")
	root := bytes.Index(data, []byte("<"+xmlRoot+">")) + len(xmlRoot) + 2
	for n := 0; n < len(data)-len("</"+xmlRoot+">\n"); n += 7 {
		tb, err := decodeXMLBytes(t, data[:n], nil, nil)
		if n < root {
			if !isCode(err, evidence.CodeDecodeFailure) {
				t.Fatalf("cut at %d before the root: %v", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if tb.Summary.Complete || len(tb.Rows) > 2 {
			t.Fatalf("cut at %d: %d rows, %+v", n, len(tb.Rows), tb.Summary)
		}
	}
	mid := bytes.Index(data, []byte("<hostStack>"))
	tb, _ := decodeXMLBytes(t, data[:mid], nil, nil)
	if len(tb.Rows) != 1 || !strings.Contains(strings.Join(tb.Summary.Limitations, "\n"), "ends inside a <record>") {
		t.Errorf("%d rows, %v", len(tb.Rows), tb.Summary.Limitations)
	}
}

func TestXMLFailures(t *testing.T) {
	cases := map[string]string{
		"wrong root": `<?xml version="1.0"?><ComputeSanitizerOutputs><record/></ComputeSanitizerOutputs>`,
		"mismatched": "<?xml version=\"1.0\"?>\n<ComputeSanitizerOutput>\n<record><kind>Api</what></record></ComputeSanitizerOutput>",
		"not utf-8":  "<ComputeSanitizerOutput><record><kind>Api\xff</kind></record></ComputeSanitizerOutput>",
		"no element": `<?xml version="1.0"?>`,
	}
	for name, doc := range cases {
		_, err := decodeXMLBytes(t, []byte(doc), nil, nil)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := decodeXMLBytes(t, []byte("<?xml version=\"1.0\"?>\n<ComputeSanitizerOutput>\n<record><kind>Api</kind></record></ComputeSanitizerOutput>"), nil, nil)
	if err != nil {
		t.Errorf("a minimal record: %v", err)
	}
}

func TestXMLLimits(t *testing.T) {
	data := formatstest.Read(t, "sanitizer/memcheck-demo.sanitizer.xml")
	_, err := formatstest.Run(t, XMLSpec, "r.sanitizer.xml", data, map[string]int64{limitRecordBytes: 256}, nil)
	if !isCode(err, evidence.CodeLimitExceeded) {
		t.Errorf("record bytes: %v", err)
	}
	_, err = formatstest.Run(t, XMLSpec, "r.sanitizer.xml", data, map[string]int64{limitRecordNodes: 8}, nil)
	if !isCode(err, evidence.CodeLimitExceeded) {
		t.Errorf("record elements: %v", err)
	}
	s, err := formatstest.Run(t, XMLSpec, "r.sanitizer.xml", data, nil, evidence.Object{formats.OptionValueBytes: int64(16)})
	if err != nil || s.Table("gpu.sanitizer_findings").Summary.Complete {
		t.Errorf("value bound: %v", err)
	}
}

func TestXMLHostOmitted(t *testing.T) {
	data := formatstest.Read(t, "sanitizer/memcheck-demo.sanitizer.xml")
	data = regexp.MustCompile(`(?s)<hostStack>.*?</hostStack>`).ReplaceAll(data, nil)
	tb, _ := decodeXMLBytes(t, data, nil, nil)
	if tb.Summary.Complete || metric(tb, "host_backtraces_omitted") != 2 {
		t.Errorf("%+v", tb.Summary)
	}
}

func FuzzDecodeXML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(formatstest.Testdata(), "sanitizer", "*.sanitizer.xml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := formatstest.Decode(XMLSpec, "f.sanitizer.xml", data, nil, nil)
		formatstest.CheckInvariants(t, s, err)
	})
}

func BenchmarkDecodeXML(b *testing.B) {
	one := formatstest.Read(b, "sanitizer/memcheck-demo.sanitizer.xml")
	start, end := bytes.Index(one, []byte("<record>")), bytes.LastIndex(one, []byte("</record>"))+len("</record>")
	var buf bytes.Buffer
	buf.Write(one[:start])
	for buf.Len() < 8<<20 {
		buf.Write(one[start:end])
	}
	buf.WriteString("</" + xmlRoot + ">\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, XMLSpec, &evidence.Artifact{Path: "/virtual/s.sanitizer.xml", Size: int64(len(data))}, bytes.NewReader(data), nil)
		if err := XMLSpec.Decoder.Decode(b.Context(), in, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}
