package memray

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// nativeCaptures are the fixtures made with --native.
var nativeCaptures = []string{"lz4-native.bin", "raw-native.bin", "raw-aggregate-native.bin"}

// nativeReference is memray's reading of a capture's native traces
// (native_reference.py, recorded by regen.sh: memray's symbolization
// depends on the binaries present when it runs).
type nativeReference struct {
	HighWatermark  []nativeRecord   `json:"high_watermark"`
	Leaked         []nativeRecord   `json:"leaked"`
	ResolvedPrefix map[string][]int `json:"resolved_prefix"`
}

type nativeRecord struct {
	TID        uint64 `json:"tid"`
	Native     uint64 `json:"native_stack_id"`
	Generation uint64 `json:"generation"`
	Bytes      int64  `json:"bytes"`
	Count      int64  `json:"count"`
}

func readNative(t *testing.T, name string) (*capture, nativeReference) {
	t.Helper()
	var ref nativeReference
	if err := json.Unmarshal(formatstest.Read(t, "memray/"+strings.TrimSuffix(name, ".bin")+".native.json"), &ref); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	in, err := formatstest.Input(Spec, &evidence.Artifact{Path: name, Size: st.Size()}, f, nil, evidence.Object{OptionNative: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := read(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return c, ref
}

// TestNativeEqualsMemray: with native rows, each allocation's native
// trace id and segment generation, and so the bytes and allocations per
// native trace of both populations, equal memray's FileReader; and the
// return addresses this reader walks for each trace agree with memray's
// own walk: memray symbolizes nothing past the last of them, and nothing
// for an address that lies in no module of the capture's memory maps.
func TestNativeEqualsMemray(t *testing.T) {
	for _, name := range nativeCaptures {
		t.Run(name, func(t *testing.T) {
			c, ref := readNative(t, name)
			if len(c.nativeFrames) == 0 || len(c.images) == 0 {
				t.Fatalf("%d native frames, %d segment generations: the capture was made with --native", len(c.nativeFrames), len(c.images))
			}
			type key struct{ tid, native, gen uint64 }
			for _, pop := range []string{"high_watermark", "leaked"} {
				recs := ref.HighWatermark
				if pop == "leaked" {
					recs = ref.Leaked
				}
				want := map[key]usage{}
				for _, r := range recs {
					u := want[key{r.TID, r.Native, r.Generation}]
					u.bytes += r.Bytes
					u.count += r.Count
					want[key{r.TID, r.Native, r.Generation}] = u
				}
				got := map[key]usage{}
				for i := range c.locs {
					h, l := c.populations(&c.locs[i])
					u := h
					if pop == "leaked" {
						u = l
					}
					if u == (usage{}) {
						continue
					}
					k := c.locNative[i]
					g := got[key{k.tid, k.native, k.gen}]
					g.bytes += u.bytes
					g.count += u.count
					got[key{k.tid, k.native, k.gen}] = g
				}
				if len(want) < 5 {
					t.Fatalf("%s: memray's reading has %d native traces: not a real comparison", pop, len(want))
				}
				for k, w := range want {
					if got[k] != w {
						t.Errorf("%s %+v: got %+v, memray %+v", pop, k, got[k], w)
					}
				}
				for k, g := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s %+v: got %+v, memray has no such trace", pop, k, g)
					}
				}
			}
			nat := newNativeSites(c)
			exact, noModule := 0, 0
			for k, counts := range ref.ResolvedPrefix {
				var id, gen uint64
				if _, err := fmt.Sscanf(k, "%d/%d", &id, &gen); err != nil {
					t.Fatal(err)
				}
				var ips []uint64
				for n := id; n != 0; n = c.nativeFrames[n-1].parent {
					ips = append(ips, c.nativeFrames[n-1].ip)
				}
				at := func(k int) int { return counts[min(k, len(counts)-1)] }
				// memray symbolizes nothing after the walk's last address.
				if len(counts)-1 > len(ips) && at(len(ips)) != at(len(counts)-1) {
					t.Errorf("trace %s: %d return addresses here; memray symbolizes frames past them: %v", k, len(ips), counts)
				}
				for i, ip := range ips {
					if nat.module(ip, gen) == nil {
						noModule++
						if at(i+1) != at(i) {
							t.Errorf("trace %s: address %d (%#x) lies in no module here; memray symbolizes it", k, i+1, ip)
						}
					}
				}
				if len(ips) > 0 && at(len(ips)) > at(len(ips)-1) {
					exact++ // memray symbolizes the last address: the depths agree exactly
				}
			}
			if exact == 0 {
				t.Errorf("no trace's depth is confirmed by memray's symbolizer")
			}
			t.Logf("%d traces, %d with the depth confirmed exactly; %d addresses in no module", len(ref.ResolvedPrefix), exact, noModule)
		})
	}
}

// TestNativeRows: native=true adds the native frames as unresolved rows
// with their module, innermost; the Python frames' inclusive bytes and
// counts are those of native=false, and each thread's self bytes still
// sum to the population.
func TestNativeRows(t *testing.T) {
	for _, name := range nativeCaptures {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(testdata, name)
			plain, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			nat, err := formatstest.DecodeFile(t, Spec, path, nil, evidence.Object{OptionNative: true})
			formatstest.CheckInvariants(t, nat, err)
			if err != nil {
				t.Fatal(err)
			}
			pt, nt := plain.Table(table.MemoryFrames.Name), nat.Table(table.MemoryFrames.Name)
			pyIncl := map[string][2]int64{}
			for _, r := range pt.Rows {
				if r["function"] == "<unknown>" {
					continue
				}
				b, _ := evidence.AsInt(r["inclusive_bytes"])
				n, _ := evidence.AsInt(r["inclusive_count"])
				pyIncl[r["frame_id"].(string)+"|"+r["thread"].(string)] = [2]int64{b, n}
			}
			var nativeRows, withModule int
			var self int64
			for _, r := range nt.Rows {
				s, _ := evidence.AsInt(r["self_bytes"])
				self += s
				if r["module"] != nil || strings.HasPrefix(r["function"].(string), "0x") {
					nativeRows++
					if r["symbolization"] != table.Unresolved || r["file"] != nil {
						t.Errorf("native row %v is not an unresolved frame without a file", r)
					}
					if r["module"] != nil {
						withModule++
					}
					continue
				}
				if r["function"] == "<unknown>" {
					continue
				}
				k := r["frame_id"].(string) + "|" + r["thread"].(string)
				b, _ := evidence.AsInt(r["inclusive_bytes"])
				n, _ := evidence.AsInt(r["inclusive_count"])
				if want, ok := pyIncl[k]; !ok || want != [2]int64{b, n} {
					t.Errorf("Python frame %s %v: inclusive %d/%d with native rows, %v without", r["function"], r["thread"], b, n, want)
				}
			}
			if nativeRows < 10 || withModule == 0 {
				t.Fatalf("%d native rows, %d with a module", nativeRows, withModule)
			}
			if pop := metric(t, nt.Summary, table.MetricPopulationBytes); self != pop {
				t.Errorf("self bytes sum to %d, the population is %d", self, pop)
			}
			if !strings.Contains(strings.Join(nt.Summary.Limitations, "\n"), "without symbols") {
				t.Errorf("the summary does not say native frames are not symbolized: %v", nt.Summary.Limitations)
			}
			if metric(t, nt.Summary, "native_frame_sites") == 0 {
				t.Error("no native frame sites")
			}
		})
	}
}
