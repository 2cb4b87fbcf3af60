package nsys

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
	"github.com/parquet-go/parquet-go"
)

// FuzzDecode patches one native table of the fixture export (KERNEL,
// MEMCPY, StringIds, RUNTIME, NVTX_EVENTS, SYNCHRONIZATION, ThreadNames,
// PROCESSES) and decodes the directory into every table: a typed failure
// or consistent evidence, never a panic.
func FuzzDecode(f *testing.F) {
	names := []string{"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "ThreadNames", "PROCESSES"}
	base := map[string][]byte{}
	for _, n := range append(names, "META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_MEMSET", "ENUM_NSYS_EVENT_TYPE", "ENUM_CUPTI_SYNC_TYPE") {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(nvfuser), n+".parquet"))
		if err != nil {
			f.Fatal(err)
		}
		base[n] = b
	}
	for i := range names {
		f.Add(uint8(i), uint32(0), []byte(nil), false, uint32(0))
	}
	f.Add(uint8(0), uint32(4), []byte("\x15\x00\x15\xff\xff\xff\xff\x0f"), false, uint32(0))
	f.Add(uint8(2), uint32(0), []byte(nil), false, uint32(9))
	f.Add(uint8(4), uint32(0), []byte(nil), false, uint32(100))
	f.Add(uint8(4), uint32(64), []byte("\x00\x00\x00\x00"), false, uint32(0))
	f.Fuzz(func(t *testing.T, which uint8, at uint32, patch []byte, insert bool, cut uint32) {
		target := names[int(which)%len(names)]
		orig := base[target]
		pos := int(at % uint32(len(orig)+1))
		data := append([]byte(nil), orig[:pos]...)
		data = append(data, patch...)
		if rest := pos + len(patch); insert {
			data = append(data, orig[pos:]...)
		} else if rest < len(orig) {
			data = append(data, orig[rest:]...)
		}
		data = data[:len(data)-int(cut%uint32(len(data)+1))]
		dir := t.TempDir()
		for n, b := range base {
			if n == target {
				b = data
			}
			if err := os.WriteFile(filepath.Join(dir, n+".parquet"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := formatstest.DecodeFile(t, Spec, filepath.Join(dir, "META_DATA_EXPORT.parquet"),
			map[string]int64{"max_footer_bytes": 1 << 20, "max_column_chunk_bytes": 1 << 22}, nil)
		formatstest.CheckInvariants(t, s, err)
	})
}

// writeBench writes an export of n kernels (over 64 names), n runtime
// calls and the fixture's metadata, and returns its metadata path and
// total size.
func writeBench(tb testing.TB, dir string, n int) (string, int64) {
	meta, err := os.ReadFile(filepath.Join(filepath.Dir(nvfuser), "META_DATA_EXPORT.parquet"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "META_DATA_EXPORT.parquet"), meta, 0o644); err != nil {
		tb.Fatal(err)
	}
	type str struct {
		ID    int64  `parquet:"id"`
		Value string `parquet:"value"`
	}
	type kernel struct {
		Start         int64 `parquet:"start"`
		End           int64 `parquet:"end"`
		DeviceID      int64 `parquet:"deviceId"`
		ContextID     int64 `parquet:"contextId"`
		StreamID      int64 `parquet:"streamId"`
		CorrelationID int64 `parquet:"correlationId"`
		GlobalPid     int64 `parquet:"globalPid"`
		DemangledName int64 `parquet:"demangledName"`
		ShortName     int64 `parquet:"shortName"`
		Registers     int64 `parquet:"registersPerThread"`
		GridX         int64 `parquet:"gridX"`
		GridY         int64 `parquet:"gridY"`
		GridZ         int64 `parquet:"gridZ"`
		BlockX        int64 `parquet:"blockX"`
		BlockY        int64 `parquet:"blockY"`
		BlockZ        int64 `parquet:"blockZ"`
		StaticShared  int64 `parquet:"staticSharedMemory"`
		DynamicShared int64 `parquet:"dynamicSharedMemory"`
		LaunchType    int64 `parquet:"launchType"`
	}
	type runtime struct {
		Start         int64 `parquet:"start"`
		End           int64 `parquet:"end"`
		GlobalTid     int64 `parquet:"globalTid"`
		CorrelationID int64 `parquet:"correlationId"`
		NameID        int64 `parquet:"nameId"`
	}
	type nvtx struct {
		Start     int64  `parquet:"start"`
		End       int64  `parquet:"end"`
		EventType int64  `parquet:"eventType"`
		Text      string `parquet:"text"`
		GlobalTid int64  `parquet:"globalTid"`
		DomainID  int64  `parquet:"domainId"`
	}
	strs := []str{{0, "cudaLaunchKernel_v7000"}}
	for i := 1; i <= 64; i++ {
		strs = append(strs, str{int64(i), fmt.Sprintf("void at::native::kernel_%d<float, 4>(int, float*, float const*)", i)})
	}
	ks := make([]kernel, n)
	rs := make([]runtime, n)
	ns := make([]nvtx, n)
	pid := int64(281980910436352)
	for i := range ks {
		s := int64(i) * 1000
		ks[i] = kernel{Start: s, End: s + 500 + int64(i%97), DeviceID: int64(i % 2), ContextID: 1, StreamID: 7, CorrelationID: int64(i),
			GlobalPid: pid, DemangledName: int64(1 + i%64), ShortName: int64(1 + i%64), Registers: 32, GridX: 128, GridY: 1, GridZ: 1,
			BlockX: 256, BlockY: 1, BlockZ: 1, LaunchType: 1}
		rs[i] = runtime{Start: s - 100, End: s - 10, GlobalTid: pid + 30156, CorrelationID: int64(i), NameID: 0}
		// Pairs of push/pop ranges: an outer step and a nested phase.
		if i%2 == 0 {
			ns[i] = nvtx{Start: s - 200, End: s + 1790, EventType: 59, Text: fmt.Sprintf("step %d", i%16), GlobalTid: pid + 30156}
		} else {
			ns[i] = nvtx{Start: s - 1100, End: s - 5, EventType: 59, Text: "forward", GlobalTid: pid + 30156}
		}
	}
	write := func(name string, rows any) {
		var err error
		switch r := rows.(type) {
		case []str:
			err = parquet.WriteFile(filepath.Join(dir, name+".parquet"), r)
		case []kernel:
			err = parquet.WriteFile(filepath.Join(dir, name+".parquet"), r)
		case []runtime:
			err = parquet.WriteFile(filepath.Join(dir, name+".parquet"), r)
		case []nvtx:
			err = parquet.WriteFile(filepath.Join(dir, name+".parquet"), r)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	write("StringIds", strs)
	write("CUPTI_ACTIVITY_KIND_KERNEL", ks)
	write("CUPTI_ACTIVITY_KIND_RUNTIME", rs)
	write("NVTX_EVENTS", ns)
	var total int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			total += fi.Size()
		}
	}
	return filepath.Join(dir, "META_DATA_EXPORT.parquet"), total
}

// only is a discarding sink that wants one table.
type only struct {
	formatstest.Discard
	name string
}

func (o only) Wants(s *table.Schema) bool { return s.Name == o.name }

// BenchmarkDecode: gpu.launches of 200k kernels (runtime calls indexed).
func BenchmarkDecode(b *testing.B) { bench(b, table.GPULaunches.Name) }

// BenchmarkTraceSlices: trace.slices of 200k kernels, 200k runtime calls
// and 200k nested NVTX ranges (600k rows).
func BenchmarkTraceSlices(b *testing.B) { bench(b, table.TraceSlices.Name) }

func bench(b *testing.B, name string) {
	path, size := writeBench(b, b.TempDir(), 200_000)
	art, err := formats.ArtifactFromPath(path, formats.RoleExplicit)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		if err := formats.Run(context.Background(), Spec, art, nil, nil, only{formatstest.Discard{Rows: &rows}, name}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
