package memray

import (
	"fmt"
	"sort"

	"github.com/flameox/flameox/internal/evidence"
)

// nativeSites turns native traces into frame sites: each return address
// placed in the module whose segment holds it in the trace's segment
// generation (memory map), named by its offset from the module's load
// bias. No symbols are read.
type nativeSites struct {
	c      *capture
	byGen  map[uint64][]segment // sorted by start
	sites  map[[2]uint64]int32  // (ip, generation) → site
	buf    []int32
	frames int64 // native frames walked
	noMod  int64 // of which no segment held the ip
	badIDs int64 // traces naming a frame the capture lacks
}

type segment struct {
	start, end uint64
	img        *image
}

func newNativeSites(c *capture) *nativeSites {
	return &nativeSites{c: c, byGen: map[uint64][]segment{}, sites: map[[2]uint64]int32{}}
}

func (n *nativeSites) segments(gen uint64) []segment {
	if segs, ok := n.byGen[gen]; ok {
		return segs
	}
	var segs []segment
	imgs := n.c.images[gen]
	for i := range imgs {
		for _, sg := range imgs[i].segs {
			if sg.end > sg.start {
				segs = append(segs, segment{sg.start, sg.end, &imgs[i]})
			}
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].start < segs[j].start })
	n.byGen[gen] = segs
	return segs
}

// module is the image whose segment holds ip in generation gen.
func (n *nativeSites) module(ip, gen uint64) *image {
	segs := n.segments(gen)
	// The images of one process do not overlap: a segment holding ip is
	// the last to start at or before it.
	i := sort.Search(len(segs), func(i int) bool { return segs[i].start > ip }) - 1
	if i >= 0 && ip < segs[i].end {
		return segs[i].img
	}
	return nil
}

// stack is the native trace of location key k, innermost first, as
// sites (the walk memray's NativeTrace makes).
func (n *nativeSites) stack(k locKey, addSite func(site) int32) []int32 {
	out := n.buf[:0]
	defer func() { n.buf = out }()
	frames := n.c.nativeFrames
	for id := k.native; id != 0; {
		if id > uint64(len(frames)) {
			n.badIDs++
			break
		}
		f := frames[id-1]
		key := [2]uint64{f.ip, k.gen}
		si, ok := n.sites[key]
		if !ok {
			st := site{native: true}
			if img := n.module(f.ip, k.gen); img != nil {
				st.module = img.path
				st.function = fmt.Sprintf("0x%x", f.ip-img.base)
			} else {
				st.function = fmt.Sprintf("0x%x", f.ip)
				n.noMod++
			}
			si = addSite(st)
			n.sites[key] = si
		}
		n.frames++
		out = append(out, si)
		id = f.parent
	}
	return out
}

func (n *nativeSites) summarize(s *evidence.Summary) {
	s.Metrics["native_frames"] = evidence.Metric{Value: len(n.c.nativeFrames), Unit: "count"}
	s.Metrics["native_frame_sites"] = evidence.Metric{Value: len(n.sites), Unit: "count"}
	if n.noMod > 0 {
		s.Metrics["native_sites_without_module"] = evidence.Metric{Value: n.noMod, Unit: "count"}
		s.Limit(fmt.Sprintf("%d native frame sites lie in no segment of the capture's memory maps: their function is the absolute address and their module is null", n.noMod))
	}
	if n.badIDs > 0 {
		s.Metrics["native_traces_unknown"] = evidence.Metric{Value: n.badIDs, Unit: "count"}
		s.Complete = false
		s.Limit(fmt.Sprintf("%d allocation locations name a native frame the capture does not hold: their native stacks stop there", n.badIDs))
	}
}
