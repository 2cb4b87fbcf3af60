package rocprof

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// traces are the rocprofv3 outputs that decode, with the table they fill.
var traces = []struct {
	file    string
	counter bool
}{
	{"kernel_trace.csv", false},
	{"kernel_trace_v0.csv", false},
	{"hip_api_trace.csv", false},
	{"hsa_api_trace.csv", false},
	{"marker_api_trace.csv", false},
	{"memory_copy_trace.csv", false},
	{"memory_allocation_trace.csv", false},
	{"scratch_memory_trace.csv", false},
	{"counter_collection.csv", true},
}

type reference struct {
	Records int64 `json:"records"`
	Slices  map[string]struct {
		Count   int64 `json:"count"`
		TotalNS int64 `json:"total_ns"`
	} `json:"slices"`
	Counters map[string]struct {
		Count int64   `json:"count"`
		Sum   float64 `json:"sum"`
	} `json:"counters"`
}

func path(name string) string { return filepath.Join(formatstest.Testdata(), "rocprofv3", name) }

func runReference(t *testing.T, p string) reference {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 not found: the reference reading needs it")
	}
	var ref reference
	formatstest.RunReference(t, py, "rocprofv3/reference.py", p, &ref)
	return ref
}

// TestMatchesReference: per-name counts and exact ns totals (per-counter
// counts and sums) equal Python's csv module reading the same file.
func TestMatchesReference(t *testing.T) {
	for _, f := range traces {
		t.Run(f.file, func(t *testing.T) {
			p := path(f.file)
			ref := runReference(t, p)
			sink, err := formatstest.DecodeFile(t, Spec, p, nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil {
				t.Fatal(err)
			}
			sl, co := sink.Table(table.TraceSlices.Name), sink.Table(table.TraceCounters.Name)
			if !sl.Summary.Complete || !co.Summary.Complete {
				t.Fatalf("incomplete: %+v %+v", sl.Summary, co.Summary)
			}
			if f.counter {
				if len(sl.Typed) != 0 || int64(len(co.Typed)) != ref.Records {
					t.Fatalf("%d slices, %d counters; reference %d records", len(sl.Typed), len(co.Typed), ref.Records)
				}
				got := map[string][2]float64{}
				for _, r := range co.Typed {
					c := r.(*table.TraceCounter)
					g := got[c.Name]
					got[c.Name] = [2]float64{g[0] + 1, g[1] + c.Value}
				}
				if len(got) != len(ref.Counters) {
					t.Errorf("%d counters, reference %d", len(got), len(ref.Counters))
				}
				for k, want := range ref.Counters {
					if g := got[k]; g != [2]float64{float64(want.Count), want.Sum} {
						t.Errorf("%q: %v; reference %+v", k, g, want)
					}
				}
				return
			}
			if len(co.Typed) != 0 || int64(len(sl.Typed)) != ref.Records {
				t.Fatalf("%d slices, %d counters; reference %d records", len(sl.Typed), len(co.Typed), ref.Records)
			}
			got := map[string][2]int64{}
			for _, r := range sl.Typed {
				s := r.(*table.TraceSlice)
				g := got[s.Name]
				got[s.Name] = [2]int64{g[0] + 1, g[1] + s.DurationNS}
			}
			if len(got) != len(ref.Slices) {
				t.Errorf("%d names, reference %d", len(got), len(ref.Slices))
			}
			for k, want := range ref.Slices {
				if g := got[k]; g != [2]int64{want.Count, want.TotalNS} {
					t.Errorf("%q: count %d total %d ns; reference %d, %d ns", k, g[0], g[1], want.Count, want.TotalNS)
				}
			}
		})
	}
}

// TestRows pins what each output's columns become.
func TestRows(t *testing.T) {
	one := func(file string) *table.TraceSlice {
		sink, err := formatstest.DecodeFile(t, Spec, path(file), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sink.Table(table.TraceSlices.Name).Typed[0].(*table.TraceSlice)
	}
	k := one("kernel_trace.csv")
	if k.Name != "void addition_kernel<float>(float*, float const*, float const*, int, int)" || k.Category.V != "KERNEL_DISPATCH" ||
		k.Device.V != "Agent 4" || k.Stream.V != "1" || k.Track.V != "queue 1" || k.Thread.Valid || k.Correlation.V != 1 ||
		k.StartNS != 1550151853029637 || k.DurationNS != 12800 || k.Args["Dispatch_Id"] != int64(1) || k.Args["Thread_Id"] != int64(834304) ||
		k.Args["Accum_VGPR_Count"] != int64(0) || k.Offset.V <= 0 || k.Depth.Valid || k.SelfNS.Valid {
		t.Errorf("kernel: %+v", k)
	}
	if v0 := one("kernel_trace_v0.csv"); v0.Stream.V != "1" || v0.Device.V != "1" || v0.Correlation.V != 1451 {
		t.Errorf("kernel v0: %+v", v0)
	}
	h := one("hip_api_trace.csv")
	if h.Name != "__hipRegisterFatBinary" || h.Category.V != "HIP_COMPILER_API_EXT" || h.Process.V != "15" || h.Thread.V != "15" ||
		h.Correlation.V != 1 || h.DurationNS != 23430 || len(h.Args) != 0 {
		t.Errorf("hip: %+v", h)
	}
	c := one("memory_copy_trace.csv")
	if c.Name != "MEMORY_COPY_HOST_TO_DEVICE" || c.Device.Valid || c.Args["Source_Agent_Id"] != int64(0) || c.Args["Destination_Agent_Id"] != int64(1) {
		t.Errorf("copy: %+v", c)
	}
	sink, _ := formatstest.DecodeFile(t, Spec, path("memory_allocation_trace.csv"), nil, nil)
	free := sink.Table(table.TraceSlices.Name).Typed[2].(*table.TraceSlice)
	if free.Name != "MEMORY_ALLOCATION_FREE" || free.Device.Valid || free.Args["Address"] != "0x00007ffb26354000" {
		t.Errorf("free: %+v", free)
	}
	sink, _ = formatstest.DecodeFile(t, Spec, path("counter_collection.csv"), nil, nil)
	ctr := sink.Table(table.TraceCounters.Name).Typed[0].(*table.TraceCounter)
	if ctr.Name != "SQ_WAVES" || ctr.Value != 16384 || ctr.TS != 3200098838431081 || ctr.Device.V != "Agent 1" || ctr.Stream.V != "1" ||
		!strings.HasPrefix(ctr.Series.V, "void addition_kernel") {
		t.Errorf("counter: %+v", ctr)
	}
}

// TestDetection: the header decides, never the name; the stats and the
// timestamp-less counter files are not traces.
func TestDetection(t *testing.T) {
	for _, f := range traces {
		if v := sniff(formatstest.Read(t, "rocprofv3/"+f.file)); v != formats.Yes {
			t.Errorf("%s: %v", f.file, v)
		}
	}
	for _, f := range []string{"hip_api_stats.csv", "counter_collection_notime.csv"} {
		if v := sniff(formatstest.Read(t, "rocprofv3/"+f)); v != formats.No {
			t.Errorf("%s: %v", f, v)
		}
	}
	bom := append([]byte("\xef\xbb\xbf"), formatstest.Read(t, "rocprofv3/hsa_api_trace.csv")...)
	if sniff(bom) != formats.Yes {
		t.Error("a byte order mark hides the header")
	}
	if sniff([]byte("Name,Calls\n")) != formats.No || sniff([]byte("\"unterminated\n")) != formats.No {
		t.Error("not a rocprof header")
	}
}

// TestFailures: bad input is a typed, located failure.
func TestFailures(t *testing.T) {
	hdr := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n"
	for _, c := range []struct {
		name, data string
		code       evidence.Code
		line       int
	}{
		{"empty", "", evidence.CodeDecodeFailure, 0},
		{"stats", string(formatstest.Read(t, "rocprofv3/hip_api_stats.csv")), evidence.CodeUnsupportedFormat, 1},
		{"notime", string(formatstest.Read(t, "rocprofv3/counter_collection_notime.csv")), evidence.CodeUnsupportedFormat, 1},
		{"time", hdr + `"HIP","f",1,1,1,x,2` + "\n", evidence.CodeDecodeFailure, 2},
		{"fields", hdr + `"HIP","f",1,1,1,2` + "\n", evidence.CodeDecodeFailure, 2},
		{"quote", hdr + `"HIP","f,1,1,1,1,2` + "\n", evidence.CodeDecodeFailure, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Decode(Spec, "t.csv", []byte(c.data), nil, nil)
			formatstest.CheckInvariants(t, sink, err)
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != c.code || f.Location.Line != c.line {
				t.Fatalf("%v (%+v)", err, f)
			}
		})
	}
	// A record past the record ceiling is LIMIT_EXCEEDED, not buffered.
	long := hdr + `"HIP","` + strings.Repeat("x", 300<<10) + `",1,1,1,1,2` + "\n"
	_, err := formatstest.Run(t, Spec, "t.csv", []byte(long), map[string]int64{"max_parse_record_bytes": 1 << 10}, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("long record: %v", err)
	}
}

// TestInverted: a record that ends before it starts is counted and named,
// not a row, and the table says it is incomplete.
func TestInverted(t *testing.T) {
	data := `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"` + "\n" +
		`"HIP","a",1,1,1,10,20` + "\n" + `"HIP","b",1,1,2,30,25` + "\n"
	sink, err := formatstest.Decode(Spec, "t.csv", []byte(data), nil, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatal(err)
	}
	s := sink.Table(table.TraceSlices.Name)
	if len(s.Typed) != 1 || s.Summary.Complete || !strings.Contains(strings.Join(s.Summary.Limitations, "\n"), "line 3") {
		t.Fatalf("%+v", s.Summary)
	}
}

// TestReaders: the same rows through one-byte and half reads, CRLF and a
// byte order mark.
func TestReaders(t *testing.T) {
	data := formatstest.Read(t, "rocprofv3/kernel_trace.csv")
	base, err := formatstest.Decode(Spec, "k.csv", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := formatstest.Canonical(t, base.Table(table.TraceSlices.Name).Rows)
	for name, wrap := range map[string]func(io.Reader) io.Reader{"one": iotest.OneByteReader, "half": iotest.HalfReader} {
		s, err := formatstest.Decode(Spec, "k.csv", data, nil, wrap)
		if err != nil || formatstest.Canonical(t, s.Table(table.TraceSlices.Name).Rows) != want {
			t.Errorf("%s: %v", name, err)
		}
	}
	crlf := []byte(strings.ReplaceAll(string(data), "\n", "\r\n"))
	s, err := formatstest.Decode(Spec, "k.csv", append([]byte("\xef\xbb\xbf"), crlf...), nil, nil)
	if err != nil || len(s.Table(table.TraceSlices.Name).Typed) != 9 {
		t.Fatalf("crlf+bom: %v", err)
	}
}

// TestValueBound: long kernel names are cut and the cut is stated.
func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, "rocprofv3/kernel_trace.csv")
	full, err := formatstest.Decode(Spec, "k.csv", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(Spec, "k.csv", data, evidence.Object{"max_value_bytes": int64(16)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

// TestNoArgs: args=false leaves args null and changes nothing else.
func TestNoArgs(t *testing.T) {
	data := formatstest.Read(t, "rocprofv3/kernel_trace.csv")
	s, err := formatstest.Decode(Spec, "k.csv", data, evidence.Object{OptionArgs: false}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := formatstest.Decode(Spec, "k.csv", data, nil, nil)
	for i, r := range s.Table(table.TraceSlices.Name).Typed {
		a, b := *r.(*table.TraceSlice), *full.Table(table.TraceSlices.Name).Typed[i].(*table.TraceSlice)
		if a.Args != nil {
			t.Fatalf("args kept: %+v", a)
		}
		b.Args = nil
		if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
			t.Fatalf("row %d differs", i)
		}
	}
}
