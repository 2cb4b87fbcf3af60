package nsys

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/table"
	"github.com/parquet-go/parquet-go"
)

// The trace view of an export: trace.slices holds the host population
// (CUDA runtime and driver calls, CUDA synchronization waits, OS runtime
// calls, NVTX ranges and marks) and, as its own population on device and
// stream ids, the device activity; trace.tracks names processes, threads
// and NVTX domains. Host rows carry process and thread (from globalTid),
// device rows device and stream, so summarize_trace_operations never
// groups the two together.

// Categories of trace.slices rows, as Kineto names the same activities so
// that one category filter works on both producers' traces.
const (
	catRuntime = "cuda_runtime"
	catDriver  = "cuda_driver"
	catSync    = "cuda_sync"
	catOSRT    = "osrt"
	catNVTX    = "nvtx"
	catKernel  = "kernel"
	catMemcpy  = "gpu_memcpy"
	catMemset  = "gpu_memset"
)

// hostTable is a table of host API calls with start, end, globalTid and a
// nameId (CUPTI_ACTIVITY_KIND_RUNTIME holds driver calls too, told apart
// by eventClass).
type hostTable struct {
	name, category string
}

var hostTables = []hostTable{
	{runtimeTable, catRuntime},
	{"CUPTI_ACTIVITY_KIND_DRIVER", catDriver},
	{"OSRT_API", catOSRT},
}

const (
	syncTable = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
	nvtxTable = "NVTX_EVENTS"
)

// eventClassDriver is TRACE_PROCESS_EVENT_CUDA_DRIVER (ENUM_NSYS_EVENT_CLASS):
// a driver call recorded in the runtime table.
const eventClassDriver = 1

// NVTX event types (ENUM_NSYS_EVENT_TYPE); the export's own enum, when it
// has one, is checked against these names.
var nvtxTypes = map[string]int64{
	"NvtxCategory":       33,
	"NvtxMark":           34,
	"NvtxPushPopRange":   59,
	"NvtxStartEndRange":  60,
	"NvtxtCategory":      64,
	"NvtxtMark":          65,
	"NvtxtPushPopRange":  70,
	"NvtxtStartEndRange": 71,
	"NvtxDomainCreate":   75,
	"NvtxDomainDestroy":  76,
}

// cuptiSyncTypes are CUpti_ActivitySynchronizationType's values, labelled
// as Nsight Systems labels them, for exports without ENUM_CUPTI_SYNC_TYPE.
var cuptiSyncTypes = map[int64]string{0: "Unknown", 1: "Event sync", 2: "Stream wait sync", 3: "Stream sync", 4: "Context sync"}

// Serialized globalTid: the OS process id in bits 24-47, the thread id in
// bits 0-23 (bits 48 and up name the host).
func pidOf(g int64) int64 { return (g >> 24) & 0xFFFFFF }
func tidOf(g int64) int64 { return g & 0xFFFFFF }

// hostOf is the host part of a globalTid/globalPid.
func hostOf(g int64) int64 { return g >> 48 }

// slicer emits trace.slices: rows placed in their enclosing slices per
// scope (a thread's API calls, a thread's NVTX domain, a device stream),
// from tables in start order. A pending row waits on its scope's stack
// until the slices it encloses are seen, so its self time is known; rows
// leave in end order, a slice after the slices it encloses.
type slicer struct {
	d      *decoder
	lt     *formats.LazyTable
	scopes map[scopeKey]*scope
	hosts  map[int64]bool

	rows       int64
	byCategory map[string]int64
	unplaced   int64 // out of start order, or overlapping their neighbour partly
	unclosed   int64 // NVTX ranges without an end
	otherNVTX  map[string]int64
	minStart   int64
	maxEnd     int64
}

type scopeKey struct {
	table string
	a, b  int64 // globalTid and domain, or device and stream
}

type scope struct {
	stack     []*pending
	lastStart int64
	started   bool
}

type pending struct {
	row   *table.TraceSlice
	child int64 // ns of the slices it directly encloses
}

func (s *slicer) span(start, end int64) {
	if s.rows == 0 || start < s.minStart {
		s.minStart = start
	}
	if s.rows == 0 || end > s.maxEnd {
		s.maxEnd = end
	}
}

// place emits row in scope k, or holds it until its children are seen.
func (s *slicer) place(k scopeKey, row *table.TraceSlice) error {
	s.span(row.StartNS, row.EndNS)
	s.rows++
	s.byCategory[row.Category.V]++
	sc := s.scopes[k]
	if sc == nil {
		sc = &scope{}
		s.scopes[k] = sc
	}
	if sc.started && row.StartNS < sc.lastStart {
		s.unplaced++
		return s.lt.Row(row)
	}
	sc.started, sc.lastStart = true, row.StartNS
	for len(sc.stack) > 0 && sc.stack[len(sc.stack)-1].row.EndNS <= row.StartNS {
		if err := s.pop(sc); err != nil {
			return err
		}
	}
	if n := len(sc.stack); n > 0 {
		top := sc.stack[n-1]
		if top.row.EndNS < row.EndNS {
			s.unplaced++ // overlaps its neighbour without nesting in it
			return s.lt.Row(row)
		}
		top.child += row.DurationNS
		row.ParentID = table.Some(top.row.SliceID)
	}
	row.Depth = table.Some(int64(len(sc.stack)))
	sc.stack = append(sc.stack, &pending{row: row})
	return nil
}

func (s *slicer) pop(sc *scope) error {
	p := sc.stack[len(sc.stack)-1]
	sc.stack = sc.stack[:len(sc.stack)-1]
	p.row.SelfNS = table.Some(p.row.DurationNS - p.child)
	return s.lt.Row(p.row)
}

// flush emits every held row, innermost first; scopes in a fixed order.
func (s *slicer) flush() error {
	keys := make([]scopeKey, 0, len(s.scopes))
	for k := range s.scopes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.table != b.table {
			return a.table < b.table
		}
		if a.a != b.a {
			return a.a < b.a
		}
		return a.b < b.b
	})
	for _, k := range keys {
		sc := s.scopes[k]
		for len(sc.stack) > 0 {
			if err := s.pop(sc); err != nil {
				return err
			}
		}
	}
	s.scopes = map[scopeKey]*scope{}
	return nil
}

// unplace emits a row that has no place in a nesting (an async range, a
// synchronization wait without a thread).
func (s *slicer) unplace(row *table.TraceSlice) error {
	s.span(row.StartNS, row.EndNS)
	s.rows++
	s.byCategory[row.Category.V]++
	return s.lt.Row(row)
}

func (s *slicer) proc(g int64) table.Null[string] {
	s.hosts[hostOf(g)] = true
	return table.Some(strconv.FormatInt(pidOf(g), 10))
}

func (s *slicer) thread(g int64) table.Null[string] {
	return table.Some(strconv.FormatInt(tidOf(g), 10))
}

// args keeps a row's native columns that have no column of their own.
func (s *slicer) args(t *ptable, vals []parquet.Value, skip map[string]bool) evidence.Object {
	var o evidence.Object
	for i, n := range t.names {
		if skip[n] || vals[i].IsNull() {
			continue
		}
		if o == nil {
			o = evidence.Object{}
		}
		o[n] = cell{v: vals[i], unsigned: t.unsigned[i], present: true}.native(s.d.values)
	}
	return o
}

// interval reads a row's start and end; ok is false for a row without an
// end (an NVTX range still open when the capture stopped).
func (d *decoder) interval(t *ptable, vals []parquet.Value, ri int64) (start, end int64, ok bool, err error) {
	start, sok, err := t.col(vals, "start").integer()
	if err != nil {
		return 0, 0, false, d.bad(t.Name, "start", ri, err, "")
	}
	if !sok {
		return 0, 0, false, d.bad(t.Name, "start", ri, nil, "a record without a start")
	}
	end, eok, err := t.col(vals, "end").integer()
	if err != nil {
		return 0, 0, false, d.bad(t.Name, "end", ri, err, "")
	}
	if eok && end < start {
		return 0, 0, false, d.bad(t.Name, "end", ri, nil, fmt.Sprintf("the record ends (%d) before it starts (%d)", end, start))
	}
	return start, end, eok, nil
}

func (d *decoder) requireCols(t *ptable, cols ...string) error {
	for _, c := range cols {
		if _, ok := t.cols[c]; !ok {
			return evidence.Failf(evidence.CodeDecodeFailure, "table %s has no %s column", t.Name, c).At(d.in.Artifact.Path, "")
		}
	}
	return nil
}

// hostMapped: globalTid stays in args too, the native id behind process and thread.
var hostMapped = map[string]bool{"start": true, "end": true, "nameId": true, "correlationId": true}

func (s *slicer) host(ctx context.Context, ht hostTable) error {
	d := s.d
	name, ok := d.e.resolve(ht.name)
	if !ok {
		return nil
	}
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	if err := d.requireCols(t, "start", "end", "globalTid", "nameId"); err != nil {
		return err
	}
	_, hasClass := t.cols["eventClass"]
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error {
		start, end, eok, err := d.interval(t, vals, ri)
		if err != nil {
			return err
		}
		if !eok {
			return d.bad(t.Name, "end", ri, nil, "a call without an end")
		}
		g, gok, err := t.col(vals, "globalTid").integer()
		if err != nil || !gok {
			return d.bad(t.Name, "globalTid", ri, err, "a call without a thread")
		}
		nm, nok, err := d.text(t, vals, "nameId", ri)
		if err != nil {
			return err
		}
		if !nok {
			return d.bad(t.Name, "nameId", ri, nil, "a call without a name")
		}
		cat := ht.category
		if hasClass {
			if c, ok, _ := t.col(vals, "eventClass").integer(); ok && c == eventClassDriver && ht.category == catRuntime {
				cat = catDriver
			}
		}
		corr, cok, err := t.col(vals, "correlationId").integer()
		if err != nil {
			return d.bad(t.Name, "correlationId", ri, err, "")
		}
		row := &table.TraceSlice{SliceID: t.Name + ":" + strconv.FormatInt(ri, 10), Kind: table.SliceThread,
			Name: d.values.Bound(nm), Category: table.Some(cat), StartNS: start, EndNS: end, DurationNS: end - start,
			Correlation: table.Null[int64]{V: corr, Valid: cok}}
		row.Process, row.Thread = s.proc(g), s.thread(g)
		row.Args = s.args(t, vals, hostMapped)
		// Runtime and driver calls of one thread nest (a runtime call
		// that calls the driver): one scope per thread and table.
		return s.place(scopeKey{table: t.Name, a: g}, row)
	})
	d.read[name] = t.rows
	return err
}

var syncMapped = map[string]bool{"start": true, "end": true, "globalPid": true, "correlationId": true, "syncType": true}

// sync reads the CUDA synchronization waits. The table names the process
// only (globalPid), not the waiting thread, so the rows are not nested.
func (s *slicer) sync(ctx context.Context) error {
	d := s.d
	name, ok := d.e.resolve(syncTable)
	if !ok {
		return nil
	}
	labels, err := d.enumLabels(ctx, "ENUM_CUPTI_SYNC_TYPE", cuptiSyncTypes)
	if err != nil {
		return err
	}
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	if err := d.requireCols(t, "start", "end", "globalPid"); err != nil {
		return err
	}
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error {
		start, end, eok, err := d.interval(t, vals, ri)
		if err != nil {
			return err
		}
		if !eok {
			return d.bad(t.Name, "end", ri, nil, "a wait without an end")
		}
		g, gok, err := t.col(vals, "globalPid").integer()
		if err != nil || !gok {
			return d.bad(t.Name, "globalPid", ri, err, "a wait without a process")
		}
		st, sok, err := t.col(vals, "syncType").integer()
		if err != nil {
			return d.bad(t.Name, "syncType", ri, err, "")
		}
		label := "Unknown"
		if sok {
			if l, ok := labels[st]; ok {
				label = l
			} else {
				label = fmt.Sprintf("sync type %d", st)
			}
		}
		corr, cok, err := t.col(vals, "correlationId").integer()
		if err != nil {
			return d.bad(t.Name, "correlationId", ri, err, "")
		}
		row := &table.TraceSlice{SliceID: t.Name + ":" + strconv.FormatInt(ri, 10), Kind: table.SliceThread,
			Name: "[CUDA " + d.values.Bound(label) + "]", Category: table.Some(catSync), StartNS: start, EndNS: end,
			DurationNS: end - start, Correlation: table.Null[int64]{V: corr, Valid: cok}}
		row.Process = s.proc(g)
		row.Args = s.args(t, vals, syncMapped)
		return s.unplace(row)
	})
	d.read[name] = t.rows
	return err
}

// enumLabels reads an ENUM_* table's id → label, else the fallback.
func (d *decoder) enumLabels(ctx context.Context, enum string, fallback map[int64]string) (map[int64]string, error) {
	name, ok := d.e.resolve(enum)
	if !ok {
		return fallback, nil
	}
	t, err := d.e.open(name)
	if err != nil {
		return nil, err
	}
	defer t.close(d.e)
	labels := map[int64]string{}
	err = t.each(ctx, d.e, func(row int64, vals []parquet.Value) error {
		if len(labels) >= 1<<16 {
			return d.bad(name, "id", row, nil, "more than 65536 enum entries")
		}
		id, ok, err := t.col(vals, "id").integer()
		if err != nil || !ok {
			return d.bad(name, "id", row, err, "an enum entry without an id")
		}
		for _, col := range []string{"label", "name"} {
			if l := t.col(vals, col); !l.null() && l.v.Kind() == parquet.ByteArray {
				labels[id] = string(l.v.ByteArray())
				return nil
			}
		}
		return d.bad(name, "label", row, nil, "an enum entry without a label")
	})
	d.read[name] = t.rows
	return labels, err
}

// device reads a device activity table as slices on device streams.
func (s *slicer) device(ctx context.Context, dt deviceTable) error {
	d := s.d
	t, err := d.e.open(dt.name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	if err := d.requireCols(t, "start", "end", "deviceId"); err != nil {
		return err
	}
	cat := map[string]string{"kernel": catKernel, "memcpy": catMemcpy, "memset": catMemset}[dt.kind]
	launch := &table.GPULaunch{}
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error {
		start, end, eok, err := d.interval(t, vals, ri)
		if err != nil {
			return err
		}
		if !eok {
			return d.bad(t.Name, "end", ri, nil, "a record without an end")
		}
		dev, dok, err := t.col(vals, "deviceId").integer()
		if err != nil || !dok {
			return d.bad(t.Name, "deviceId", ri, err, "a record without a device")
		}
		stream, sok, err := t.col(vals, "streamId").integer()
		if err != nil {
			return d.bad(t.Name, "streamId", ri, err, "")
		}
		corr, cok, err := t.col(vals, "correlationId").integer()
		if err != nil {
			return d.bad(t.Name, "correlationId", ri, err, "")
		}
		row := &table.TraceSlice{SliceID: t.Name + ":" + strconv.FormatInt(ri, 10), Kind: table.SliceThread,
			Category: table.Some(cat), StartNS: start, EndNS: end, DurationNS: end - start,
			Correlation: table.Null[int64]{V: corr, Valid: cok}}
		row.Device = table.Some(strconv.FormatInt(dev, 10))
		if sok {
			row.Stream = table.Some(strconv.FormatInt(stream, 10))
		}
		if g, ok, _ := t.col(vals, "globalPid").integer(); ok {
			row.Process = s.proc(g)
		}
		switch dt.kind {
		case "kernel":
			*launch = table.GPULaunch{}
			num := func(col string) (table.Null[int64], error) {
				n, ok, err := t.col(vals, col).integer()
				if err != nil {
					return table.Null[int64]{}, d.bad(t.Name, col, ri, err, "")
				}
				return table.Null[int64]{V: n, Valid: ok}, nil
			}
			if err := d.kernel(t, vals, ri, launch, num); err != nil {
				return err
			}
			row.Name = launch.Name
		case "memcpy":
			label := "Unknown"
			if ck, ok, err := t.col(vals, "copyKind").integer(); err != nil {
				return d.bad(t.Name, "copyKind", ri, err, "")
			} else if ok {
				if l, ok := d.copy[ck]; ok {
					label = l
				} else {
					label = fmt.Sprintf("copy kind %d", ck)
				}
			}
			row.Name = "[CUDA memcpy " + d.values.Bound(label) + "]"
		case "memset":
			row.Name = "[CUDA memset]"
		}
		row.Args = s.args(t, vals, deviceSliceMapped)
		return s.place(scopeKey{table: t.Name, a: dev, b: stream}, row)
	})
	d.read[dt.name] = t.rows
	return err
}

// deviceSliceMapped: the name columns are StringIds references, resolved
// into the name; gpu.launches keeps the short and mangled names.
var deviceSliceMapped = map[string]bool{"start": true, "end": true, "deviceId": true, "streamId": true, "correlationId": true,
	"demangledName": true, "shortName": true, "mangledName": true}

// nvtxState is what NVTX_EVENTS says of itself: domain and category names,
// and which event types are which.
type nvtxState struct {
	types      map[int64]string // eventType → name, NVTX types only
	domains    map[int64]string
	categories map[[2]int64]string // domain, category
}

func (d *decoder) nvtxTypes(ctx context.Context) (map[int64]string, error) {
	out := map[int64]string{}
	for n, id := range nvtxTypes {
		out[id] = n
	}
	name, ok := d.e.resolve("ENUM_NSYS_EVENT_TYPE")
	if !ok {
		return out, nil
	}
	labels, err := d.enumNames(ctx, name)
	if err != nil {
		return nil, err
	}
	// The export's own numbering, when it has one, is the only one.
	out = map[int64]string{}
	for id, n := range labels {
		if _, known := nvtxTypes[n]; known {
			out[id] = n
		}
	}
	return out, nil
}

// enumNames reads an ENUM_* table's id → name (the symbolic column).
func (d *decoder) enumNames(ctx context.Context, name string) (map[int64]string, error) {
	t, err := d.e.open(name)
	if err != nil {
		return nil, err
	}
	defer t.close(d.e)
	out := map[int64]string{}
	err = t.each(ctx, d.e, func(row int64, vals []parquet.Value) error {
		if len(out) >= 1<<16 {
			return d.bad(name, "id", row, nil, "more than 65536 enum entries")
		}
		id, ok, err := t.col(vals, "id").integer()
		n := t.col(vals, "name")
		if err != nil || !ok || n.null() || n.v.Kind() != parquet.ByteArray {
			return d.bad(name, "name", row, err, "an enum entry without an id or name")
		}
		out[id] = string(n.v.ByteArray())
		return nil
	})
	d.read[name] = t.rows
	return out, err
}

var nvtxMapped = map[string]bool{"start": true, "end": true, "eventType": true, "text": true, "textId": true,
	"domainId": true, "category": true}

// nvtxIDs reads an NVTX event's type, domain and category.
func (d *decoder) nvtxIDs(t *ptable, vals []parquet.Value, ri int64) (typ, domain, category int64, err error) {
	typ, ok, err := t.col(vals, "eventType").integer()
	if err != nil || !ok {
		return 0, 0, 0, d.bad(t.Name, "eventType", ri, err, "an event without a type")
	}
	if domain, _, err = t.col(vals, "domainId").integer(); err != nil {
		return 0, 0, 0, d.bad(t.Name, "domainId", ri, err, "")
	}
	if category, _, err = t.col(vals, "category").integer(); err != nil {
		return 0, 0, 0, d.bad(t.Name, "category", ri, err, "")
	}
	return typ, domain, category, nil
}

// nvtxText is an NVTX event's text: inline, else registered (textId).
func (d *decoder) nvtxText(t *ptable, vals []parquet.Value, ri int64) (string, bool, error) {
	if s, ok, err := d.text(t, vals, "text", ri); err != nil || ok {
		return s, ok, err
	}
	if _, has := t.cols["textId"]; has {
		return d.text(t, vals, "textId", ri)
	}
	return "", false, nil
}

// nvtxMeta reads what NVTX_EVENTS says of itself, once: the event types
// and the domain and category names, which may be registered after the
// ranges that use them. Nil when the export has no NVTX_EVENTS.
func (d *decoder) nvtxMeta(ctx context.Context) (*nvtxState, error) {
	if d.nvtx != nil {
		return d.nvtx, nil
	}
	name, ok := d.e.resolve(nvtxTable)
	if !ok {
		return nil, nil
	}
	types, err := d.nvtxTypes(ctx)
	if err != nil {
		return nil, err
	}
	st := &nvtxState{types: types, domains: map[int64]string{}, categories: map[[2]int64]string{}}
	var held int64
	err = d.eachRow(ctx, name, func(t *ptable, ri int64, vals []parquet.Value) error {
		if ri == 0 {
			if err := d.requireCols(t, "start", "eventType", "globalTid"); err != nil {
				return err
			}
		}
		typ, domain, category, err := d.nvtxIDs(t, vals, ri)
		if err != nil {
			return err
		}
		tn := types[typ]
		if tn != "NvtxDomainCreate" && tn != "NvtxCategory" && tn != "NvtxtCategory" {
			return nil
		}
		txt, ok, err := d.nvtxText(t, vals, ri)
		if err != nil || !ok {
			return err
		}
		if held += int64(len(txt)); held > d.in.Limit(limitStrings.Name) {
			return d.in.Exceeded(limitStrings.Name, nil)
		}
		if tn == "NvtxDomainCreate" {
			st.domains[domain] = txt
		} else {
			st.categories[[2]int64{domain, category}] = txt
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.nvtx = st
	return st, nil
}

// nvtx reads the NVTX ranges and marks.
func (s *slicer) nvtx(ctx context.Context) error {
	d := s.d
	st, err := d.nvtxMeta(ctx)
	if err != nil || st == nil {
		return err
	}
	types := st.types
	name, _ := d.e.resolve(nvtxTable)
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	ids := func(vals []parquet.Value, ri int64) (int64, int64, int64, error) { return d.nvtxIDs(t, vals, ri) }
	text := func(vals []parquet.Value, ri int64) (string, bool, error) { return d.nvtxText(t, vals, ri) }
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error {
		typ, domain, category, err := ids(vals, ri)
		if err != nil {
			return err
		}
		tn := types[typ]
		var kind string
		switch tn {
		case "NvtxPushPopRange", "NvtxtPushPopRange":
			kind = table.SliceThread
		case "NvtxStartEndRange", "NvtxtStartEndRange":
			kind = table.SliceAsync
		case "NvtxMark", "NvtxtMark":
			kind = table.SliceInstant
		case "NvtxDomainCreate", "NvtxDomainDestroy", "NvtxCategory", "NvtxtCategory":
			return nil // read above: names, not events
		default:
			if tn == "" {
				tn = "event type " + strconv.FormatInt(typ, 10)
			}
			s.otherNVTX[tn]++
			return nil
		}
		start, end, eok, err := d.interval(t, vals, ri)
		if err != nil {
			return err
		}
		if kind == table.SliceInstant {
			end, eok = start, true
		}
		if !eok {
			s.unclosed++
			return nil
		}
		g, gok, err := t.col(vals, "globalTid").integer()
		if err != nil || !gok {
			return d.bad(t.Name, "globalTid", ri, err, "an event without a thread")
		}
		txt, _, err := text(vals, ri)
		if err != nil {
			return err
		}
		row := &table.TraceSlice{SliceID: t.Name + ":" + strconv.FormatInt(ri, 10), Kind: kind, Name: d.values.Bound(txt),
			Category: table.Some(catNVTX), StartNS: start, EndNS: end, DurationNS: end - start}
		row.Process, row.Thread, row.Track = s.proc(g), s.thread(g), nvtxTrack(domain)
		args := s.args(t, vals, nvtxMapped)
		if args == nil {
			args = evidence.Object{}
		}
		args["event_type"] = tn
		args["domain_id"] = domain
		if dn, ok := st.domains[domain]; ok {
			args["domain"] = d.values.Bound(dn)
		}
		if _, ok := t.cols["category"]; ok && !t.col(vals, "category").null() {
			args["nvtx_category"] = category
			if cn, ok := st.categories[[2]int64{domain, category}]; ok {
				args["nvtx_category_name"] = d.values.Bound(cn)
			}
		}
		row.Args = args
		if kind != table.SliceThread {
			return s.unplace(row)
		}
		// Push/pop ranges nest per thread and domain, as NVTX keeps one
		// range stack per thread per domain.
		return s.place(scopeKey{table: t.Name, a: g, b: domain}, row)
	})
	d.read[name] = t.rows
	return err
}

// nvtxTrack is the track of an NVTX domain's ranges: "nvtx" for the
// default domain (id 0), else "nvtx:<domain id>", which trace.tracks
// names.
func nvtxTrack(domain int64) table.Null[string] {
	if domain == 0 {
		return table.Some("nvtx")
	}
	return table.Some("nvtx:" + strconv.FormatInt(domain, 10))
}

// slices emits trace.slices.
func (d *decoder) slices(ctx context.Context, out formats.Sink, present []deviceTable) error {
	s := &slicer{d: d, lt: formats.NewLazyTable(out, table.TraceSlices.Header("")), scopes: map[scopeKey]*scope{},
		hosts: map[int64]bool{}, byCategory: map[string]int64{}, otherNVTX: map[string]int64{}}
	step := func(err error) error {
		if err == nil {
			err = s.flush()
		}
		return err
	}
	var err error
	for _, ht := range hostTables {
		if err = step(s.host(ctx, ht)); err != nil {
			break
		}
	}
	if err == nil {
		err = step(s.sync(ctx))
	}
	if err == nil {
		err = step(s.nvtx(ctx))
	}
	for _, dt := range present {
		if err != nil {
			break
		}
		err = step(s.device(ctx, dt))
	}
	if err != nil {
		return s.lt.Abort(err, &evidence.Summary{RowsObserved: s.rows, Complete: false,
			Limitations: []string{"decoding stopped at a malformed or unreadable table; the rows before it are a prefix"}})
	}
	return s.lt.End(s.summary())
}

func (s *slicer) summary() *evidence.Summary {
	d := s.d
	sum := &evidence.Summary{RowsObserved: s.rows, Complete: true, Metrics: map[string]evidence.Metric{}}
	cats := make([]string, 0, len(s.byCategory))
	for c := range s.byCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		sum.Metrics[c+"_slices"] = evidence.Metric{Value: s.byCategory[c], Unit: "slices"}
	}
	sum.Metrics["unplaced_slices"] = evidence.Metric{Value: s.unplaced, Unit: "slices"}
	sum.Metrics["unclosed_nvtx_ranges"] = evidence.Metric{Value: s.unclosed, Unit: "ranges"}
	if s.rows > 0 {
		sum.Metrics["first_start_ns"] = evidence.Metric{Value: s.minStart, Unit: "ns"}
		sum.Metrics["last_end_ns"] = evidence.Metric{Value: s.maxEnd, Unit: "ns"}
	}
	read := evidence.Object{}
	for k, v := range d.read {
		read[k] = v
	}
	sum.Coverage = evidence.Object{
		"time_unit":   "ns",
		"time_source": "Nsight Systems timestamps: integer ns from the session start (TARGET_INFO_SESSION_START_TIME gives its UTC epoch)",
		"tables_read": read,
		"members":     d.e.memberList(),
		"populations": "host: CUDA runtime, driver, synchronization, OS runtime and NVTX rows carry process and thread ids; device: kernel, memcpy and memset rows carry device and stream ids",
	}
	d.cover(sum)
	sum.Limit(d.memberLimit())
	if _, ok := d.e.resolve(nvtxTable); !ok {
		sum.Limit("the export has no NVTX_EVENTS table: no NVTX phases (capture with --trace=nvtx)")
	}
	if _, ok := d.e.resolve(runtimeTable); !ok {
		sum.Limit("the export has no " + runtimeTable + " table: no CUDA API calls (capture with --trace=cuda)")
	}
	if s.unplaced > 0 {
		sum.Limit(fmt.Sprintf("%d slices are out of start order in their thread, domain or stream, or overlap a neighbour without nesting in it: their depth, parent and self time are null, and the self time of a slice around them includes them", s.unplaced))
	}
	if s.unclosed > 0 {
		sum.Complete = false
		sum.Limit(fmt.Sprintf("%d NVTX ranges have no end (still open when the capture stopped): they are not rows", s.unclosed))
	}
	if len(s.otherNVTX) > 0 {
		sum.Complete = false
		keys := make([]string, 0, len(s.otherNVTX))
		for k := range s.otherNVTX {
			keys = append(keys, fmt.Sprintf("%s (%d)", k, s.otherNVTX[k]))
		}
		sort.Strings(keys)
		sum.Limit("NVTX events of other types are not rows: " + strings.Join(keys, ", "))
	}
	if len(s.hosts) > 1 {
		sum.Limit(fmt.Sprintf("the export holds %d hosts; process and thread ids are OS ids, which may repeat across hosts (args.globalTid keeps the native id)", len(s.hosts)))
	}
	if _, ok := d.e.resolve("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"); ok {
		sum.Limit("CUDA synchronization waits name their process, not their thread: their depth and self time are null")
	}
	d.values.Summarize(sum)
	return sum
}

// tracks emits trace.tracks: process names (PROCESSES), thread names
// (ThreadNames, joined through StringIds) and NVTX domains.
func (d *decoder) tracks(ctx context.Context, out formats.Sink, domains map[int64]string) error {
	lt := formats.NewLazyTable(out, table.TraceTracks.Header(""))
	var rows int64
	fail := func(err error) error {
		return lt.Abort(err, &evidence.Summary{RowsObserved: rows, Complete: false,
			Limitations: []string{"decoding stopped at a malformed table; the rows before it are a prefix"}})
	}
	id := func(n int64) table.Null[string] { return table.Some(strconv.FormatInt(n, 10)) }
	if name, ok := d.e.resolve("PROCESSES"); ok {
		err := d.eachRow(ctx, name, func(t *ptable, ri int64, vals []parquet.Value) error {
			g, ok, err := t.col(vals, "globalPid").integer()
			if err != nil || !ok {
				return d.bad(name, "globalPid", ri, err, "a process without an id")
			}
			r := &table.TraceTrack{Kind: table.TrackProcess, Process: id(pidOf(g))}
			if n, ok, err := d.text(t, vals, "name", ri); err != nil {
				return err
			} else if ok {
				r.Name = table.Some(d.values.Bound(n))
			}
			rows++
			return lt.Row(r)
		})
		if err != nil {
			return fail(err)
		}
	}
	if name, ok := d.e.resolve("ThreadNames"); ok {
		err := d.eachRow(ctx, name, func(t *ptable, ri int64, vals []parquet.Value) error {
			g, ok, err := t.col(vals, "globalTid").integer()
			if err != nil || !ok {
				return d.bad(name, "globalTid", ri, err, "a thread name without a thread")
			}
			r := &table.TraceTrack{Kind: table.TrackThread, Process: id(pidOf(g)), Thread: id(tidOf(g))}
			if n, ok, err := d.text(t, vals, "nameId", ri); err != nil {
				return err
			} else if ok {
				r.Name = table.Some(d.values.Bound(n))
			}
			if p, ok, _ := t.col(vals, "priority").integer(); ok {
				r.SortIndex = table.Some(p)
			}
			rows++
			return lt.Row(r)
		})
		if err != nil {
			return fail(err)
		}
	}
	ids := make([]int64, 0, len(domains))
	for k := range domains {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, k := range ids {
		rows++
		if err := lt.Row(&table.TraceTrack{Kind: table.TrackOther, Track: nvtxTrack(k),
			Name: table.Some(d.values.Bound(domains[k]))}); err != nil {
			return err
		}
	}
	s := &evidence.Summary{RowsObserved: rows, Complete: true,
		Coverage: evidence.Object{"members": d.e.memberList()}}
	d.cover(s)
	s.Limit("sort_index of a thread is its ThreadNames priority")
	d.values.Summarize(s)
	return lt.End(s)
}

// eachRow opens a table and calls fn with each row.
func (d *decoder) eachRow(ctx context.Context, name string, fn func(t *ptable, ri int64, vals []parquet.Value) error) error {
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error { return fn(t, ri, vals) })
	d.read[name] = t.rows
	return err
}
