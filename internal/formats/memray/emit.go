package memray

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	"github.com/flameox/flameox/internal/unit"
)

// CountUnit is the unit of memory.frames counts from a Memray capture.
const CountUnit = "allocations"

// site is a frame identity as memray reports it: function, file, line.
type site struct {
	function, file string
	line           int32
	resolved       bool // false: no code object, or no Python frame at all
	// A native frame: its module (empty when no segment holds its ip)
	// and, as function, its offset in the module (else its ip).
	native bool
	module string
}

type rowKey struct {
	site int32
	tid  uint64
}

// populations returns each location's usage in the high watermark and at
// the end.
func (c *capture) populations(l *location) (hwm, leaked usage) {
	if c.aggregated {
		return l.snap, l.cur
	}
	return c.atPeak(l), l.cur
}

func (c *capture) emit(in *formats.Input, out formats.Sink) error {
	population := in.String(OptionPopulation)
	if population == "" {
		population = table.PopulationHighWatermark
	}
	var hwm, leaked usage
	for i := range c.locs {
		h, l := c.populations(&c.locs[i])
		hwm.bytes += h.bytes
		hwm.count += h.count
		leaked.bytes += l.bytes
		leaked.count += l.count
	}
	s := c.summary(population, hwm, leaked)
	if !out.Wants(table.MemoryFrames.Schema) {
		return nil
	}
	tw, err := out.Begin(table.MemoryFrames.HeaderBased(CountUnit, 1))
	if err != nil {
		return err
	}

	var sites []site
	siteIdx := map[site]int32{}
	siteOfFrame := make([]int32, len(c.frames))
	for i := range siteOfFrame {
		siteOfFrame[i] = -1
	}
	missingCode := 0
	addSite := func(st site) int32 {
		if i, ok := siteIdx[st]; ok {
			return i
		}
		i := int32(len(sites))
		sites = append(sites, st)
		siteIdx[st] = i
		return i
	}
	frameSite := func(f uint32) int32 {
		if i := siteOfFrame[f]; i >= 0 {
			return i
		}
		fr := c.frames[f]
		st := site{resolved: true}
		if co, ok := c.codes[fr.code]; ok {
			st.function, st.file = co.function, co.file
			st.line = lineOf(c.h.pythonVersion, co.linetable, fr.offset, co.firstLine)
		} else {
			// memray reports an empty name and file for a frame whose code
			// object the capture lacks; it stays an unresolved frame.
			st.resolved = false
			missingCode++
		}
		i := addSite(st)
		siteOfFrame[f] = i
		return i
	}
	unknown := int32(-1)
	nat := newNativeSites(c)

	type acc struct {
		key        rowKey
		self, incl usage
		seen       int32 // the location that last counted it inclusively
	}
	var rows []acc
	rowIdx := map[rowKey]int32{}
	row := func(k rowKey) int32 {
		if i, ok := rowIdx[k]; ok {
			return i
		}
		i := int32(len(rows))
		rows = append(rows, acc{key: k, seen: -1})
		rowIdx[k] = i
		return i
	}
	var stack, full []int32
	ms := newMemStacks(out) // stacks.go
	for li := range c.locs {
		l := &c.locs[li]
		h, lk := c.populations(l)
		u := h
		if population == table.PopulationLeaked {
			u = lk
		}
		if u.count == 0 && u.bytes == 0 {
			continue
		}
		stack = stack[:0]
		for n := l.stack; n != 0; n = c.nodes[n].parent {
			stack = append(stack, frameSite(c.nodes[n].frame))
		}
		if l.tid == c.h.mainTID {
			// memray hides the outermost frames of the main thread: its
			// own runner's (header skipped_frames_on_main_tid).
			keep := max(len(stack)-int(min(c.h.skippedMain, uint64(len(stack)))), 0)
			stack = stack[:keep]
		}
		if c.nativeRows {
			// The native frames are the innermost: memray records the
			// native trace at the allocation; without symbols, where the
			// interpreter's frames interleave with the Python frames is
			// not known, so the Python frames stay outside them.
			full = append(append(full[:0], nat.stack(c.locNative[li], addSite)...), stack...)
			stack, full = full, stack
		}
		if len(stack) == 0 {
			if unknown < 0 {
				unknown = addSite(site{function: "<unknown>", line: 0})
			}
			stack = append(stack, unknown)
		}
		ms.add(stack, l.tid, u)
		leaf := row(rowKey{stack[0], l.tid})
		rows[leaf].self.bytes += u.bytes
		rows[leaf].self.count += u.count
		for _, st := range stack {
			r := row(rowKey{st, l.tid})
			if rows[r].seen == int32(li) {
				continue // a recursive frame counts once
			}
			rows[r].seen = int32(li)
			rows[r].incl.bytes += u.bytes
			rows[r].incl.count += u.count
		}
	}

	vals := in.Values()
	ids := make([]string, len(sites))
	var buf []byte
	for i, st := range sites {
		ids[i], buf = frameID(st, buf)
	}
	labels := map[uint64]table.Null[string]{}
	out2 := make([]table.MemoryFrame, len(rows))
	for i, r := range rows {
		st := sites[r.key.site]
		lab, ok := labels[r.key.tid]
		if !ok {
			lab = table.Some(vals.Bound(c.threadLabel(r.key.tid)))
			labels[r.key.tid] = lab
		}
		sym := table.Symbolized
		if !st.resolved {
			sym = table.Unresolved
		}
		line := int64(st.line)
		if line == 0 {
			line = -1 // memray's 0: no line
		}
		out2[i] = table.MemoryFrame{
			FrameSite: table.FrameSite{
				FrameID: ids[r.key.site], Function: vals.Bound(st.function), File: table.NonEmpty(vals.Bound(st.file)),
				Line: line, Column: -1, Module: table.NonEmpty(vals.Bound(st.module)), Symbolization: sym, Thread: lab,
			},
			Population: population,
			SelfBytes:  r.self.bytes, InclusiveBytes: r.incl.bytes,
			SelfCount: table.Some(r.self.count), InclusiveCount: table.Some(r.incl.count),
		}
		if err := tw.Row(&out2[i]); err != nil {
			return err
		}
	}
	s.RowsObserved = int64(len(rows))
	s.Metrics["frames"] = evidence.Metric{Value: len(sites), Unit: "count"}
	if missingCode > 0 {
		s.Metrics["frames_without_code_object"] = evidence.Metric{Value: missingCode, Unit: "count"}
		s.Complete = false
		s.Limit(fmt.Sprintf("%d Python frames name a code object the capture does not hold: they are unresolved rows with no function or file", missingCode))
	}
	if c.nativeRows {
		nat.summarize(s)
	}
	vals.Summarize(s)
	if err := tw.End(s); err != nil {
		return err
	}
	return ms.emit(c, in, out, ids, s)
}

func (c *capture) threadLabel(tid uint64) string {
	t := c.threads[tid]
	switch {
	case t != nil && t.named:
		return fmt.Sprintf("thread %d (%s)", tid, t.name)
	case tid == c.h.mainTID:
		return fmt.Sprintf("thread %d (main)", tid)
	}
	return fmt.Sprintf("thread %d", tid)
}

// frameID hashes a frame's identity: the same function, file and line in
// two captures get the same id.
func frameID(st site, buf []byte) (string, []byte) {
	buf = append(buf[:0], st.function...)
	buf = append(buf, 0)
	buf = append(buf, st.file...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, int64(st.line), 10)
	if !st.resolved {
		buf = append(buf, 0, 'u')
	}
	if st.native {
		buf = append(buf, 0, 'n', 0)
		buf = append(buf, st.module...)
	}
	sum := sha256.Sum256(buf)
	return "memray:" + hex.EncodeToString(sum[:8]), buf
}

func pyVersion(v int32) string {
	return fmt.Sprintf("%d.%d.%d", (v>>24)&0xff, (v>>16)&0xff, (v>>8)&0xff)
}

func (c *capture) summary(population string, hwm, leaked usage) *evidence.Summary {
	h := c.h
	pop := hwm
	if population == table.PopulationLeaked {
		pop = leaked
	}
	m := map[string]evidence.Metric{
		table.MetricPopulationBytes: {Value: pop.bytes, Unit: unit.Bytes},
		table.MetricPopulationCount: {Value: pop.count, Unit: CountUnit},
		"high_watermark_bytes":      {Value: hwm.bytes, Unit: unit.Bytes},
		"high_watermark_count":      {Value: hwm.count, Unit: CountUnit},
		"leaked_bytes":              {Value: leaked.bytes, Unit: unit.Bytes},
		"leaked_count":              {Value: leaked.count, Unit: CountUnit},
		"locations":                 {Value: len(c.locs), Unit: "count"},
		"threads":                   {Value: len(c.threads), Unit: "count"},
		"record_stream_bytes":       {Value: c.streamBytes, Unit: unit.Bytes},
	}
	cov := evidence.Object{
		"header_version":          int64(h.version),
		"python_version":          pyVersion(h.pythonVersion),
		"native_traces":           h.nativeTraces,
		"file_format":             map[byte]string{fileAll: "ALL_ALLOCATIONS", fileAggregated: "AGGREGATED_ALLOCATIONS"}[h.fileFormat],
		"compressed":              c.compressed,
		"pid":                     int64(h.pid),
		"main_thread_id":          strconv.FormatUint(h.mainTID, 10),
		"python_allocator":        pythonAllocators[h.pyAllocator],
		"trace_python_allocators": h.tracePyAlloc,
		"track_object_lifetimes":  h.trackObjects,
		"start_time_ms":           h.startMS,
		"end_time_ms":             h.endMS,
	}
	frames := "frames are Python frames as memray reports them (function, file, line)"
	if c.nativeRows {
		frames = "the Python frames are as memray reports them (function, file, line)"
	}
	s := &evidence.Summary{Complete: true, Metrics: m, Coverage: cov, Limitations: []string{
		frames + "; the main thread's outermost frames that memray hides (its runner's) are hidden too",
		"temporary-allocation projections are not computed",
	}}
	if c.aggregated {
		m["aggregated_records"] = evidence.Metric{Value: c.aggRecords, Unit: "count"}
		m["peak_memory"] = evidence.Metric{Value: c.aggHWM.bytes, Unit: unit.Bytes}
		m["memory_snapshots"] = evidence.Metric{Value: c.snapshots, Unit: "count"}
		s.Limit("an aggregated capture (memray run --aggregate) keeps no allocation history: only its writer's high-watermark and leak contributions per location; allocation totals are not known")
	} else {
		m["allocation_records"] = evidence.Metric{Value: c.records, Unit: "records"}
		m["allocations"] = evidence.Metric{Value: c.allocations, Unit: CountUnit}
		m["allocated_bytes"] = evidence.Metric{Value: int64(c.allocated), Unit: unit.Bytes}
		m["peak_memory"] = evidence.Metric{Value: int64(c.peak), Unit: unit.Bytes}
		m["memory_records"] = evidence.Metric{Value: c.memoryRecords, Unit: "records"}
		byAlloc := evidence.Object{}
		for i, n := range c.byAllocator {
			if n > 0 {
				byAlloc[allocatorNames[i]] = n
			}
		}
		cov["allocations_by_allocator"] = byAlloc
		s.Limit("allocation history contributes the scalar totals (allocations, allocated_bytes, peak_memory); frame rows describe the requested population only")
	}
	if c.maxRSS > 0 {
		m["peak_rss"] = evidence.Metric{Value: int64(c.maxRSS), Unit: unit.Bytes}
	}
	if h.nativeTraces {
		m["native_trace_records"] = evidence.Metric{Value: c.native, Unit: "records"}
		m["segment_generations"] = evidence.Metric{Value: c.mapStarts, Unit: "count"}
		if c.nativeRows {
			s.Limit("native frames are rows without symbols (symbolization unresolved, no file or line): function is the return address's offset in the module the capture's segment maps place it in (0x-prefixed hex, the address in the ELF file), module that file; memray symbolizes them itself with the binaries, this reader does not. They are the innermost frames of each stack, the Python frames outside them")
		} else {
			s.Limit("the capture has native traces; native frames are rows only with option native=true: here each allocation is attributed to its Python stack (memray's stack_trace)")
		}
	}
	if h.trackObjects {
		m["object_records"] = evidence.Metric{Value: c.objects + c.surviving, Unit: "records"}
		s.Limit("object lifetime records (--track-object-lifetimes) are counted, not projected")
	}
	if c.truncated != nil {
		s.Complete = false
		s.Limit(c.truncated.Error() + "; the populations and totals are those of the records before that point, as memray's reader reads it")
	}
	return s
}
