// Package nsys decodes Nsight Systems parquetdir exports (`nsys export
// --type parquetdir`): a directory with one <TABLE>.parquet per table and
// META_DATA_EXPORT.parquet. The artifact is that metadata file; the
// decoder reads the device activity tables beside it (KERNEL, MEMCPY,
// MEMSET), joins their string references through StringIds and their
// correlation ids to the CUDA runtime calls, and emits gpu.launches.
// flameox never reads or creates Nsight's SQLite export.
//
// Tables resolve by exact name, then by their highest _V<n> variant;
// integer columns are read at any physical width and signedness, and a
// name column holds either a StringIds reference or the text itself.
//
// It imports evidence, formats, formats/parquetpreview (the checked
// Parquet reader), param, table and parquet-go.
package nsys

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/parquetpreview"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
	"github.com/parquet-go/parquet-go"
)

// Version is the decoder's version.
const Version = "1"

// MetaTable is the export's metadata table, the file a user names.
const MetaTable = "META_DATA_EXPORT"

var (
	limitStrings = formats.Limit{Name: "max_string_bytes", Default: 1 << 30, Unit: "bytes",
		Doc: "bytes of StringIds text held to resolve name references"}
	limitCalls = formats.Limit{Name: "max_api_calls", Default: 50_000_000, Unit: "calls",
		Doc: "CUDA runtime calls indexed by process and correlation id to name the call that launched each record"}
)

// Spec is the Nsight Systems parquetdir format. Its sniffer knows the
// metadata table by the export's first key in its first bytes (a Parquet
// file whose pages hold EXPORT_PRODUCT_NAME, which the first row names and
// Snappy keeps literal); a writer that compresses it out of sight needs
// the explicit format, and the file is otherwise previewed as Parquet.
var Spec = &formats.Spec{
	Name:       "nsys-parquetdir",
	Title:      "Nsight Systems parquetdir export",
	Family:     formats.FamilyGPU,
	Sniff:      sniff,
	Tables:     []*table.Schema{table.GPULaunches.Schema, table.TraceSlices.Schema, table.TraceTracks.Schema},
	Limits:     append(append([]formats.Limit{}, parquetpreview.Limits...), limitStrings, limitCalls),
	Options:    []param.Param{formats.ValueBytesParam},
	Producer:   "NVIDIA Nsight Systems (nsys export --type parquetdir)",
	Version:    Version,
	Decoder:    formats.DecoderFunc(decode),
	Companions: companions,
}

// companions are the export's other table files, which a bundle keeps
// with the metadata table: the whole directory.
func companions(a *evidence.Artifact) (string, []string, error) {
	dir := filepath.Dir(a.Path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, evidence.Wrap(evidence.CodeIOFailure, err, "list the export directory %s", dir)
	}
	var out []string
	for _, d := range ents {
		if n := d.Name(); strings.HasSuffix(n, ".parquet") && d.Type().IsRegular() && n != filepath.Base(a.Path) {
			out = append(out, n)
		}
	}
	return dir, out, nil
}

func sniff(prefix []byte) formats.Verdict {
	if !bytes.HasPrefix(prefix, []byte("PAR1")) {
		return formats.No
	}
	if bytes.Contains(prefix, []byte("EXPORT_PRODUCT_NAME")) {
		return formats.Yes
	}
	return formats.NeedMore
}

// deviceTable is a native table of device activity and how its rows
// become launches.
type deviceTable struct {
	name string
	kind string
}

// DeviceTables are the CUPTI activity tables that hold device work. The
// other CUPTI_ACTIVITY_KIND_* tables (RUNTIME, SYNCHRONIZATION...) are
// host API calls or host-side waits and never count as launches.
var deviceTables = []deviceTable{
	{"CUPTI_ACTIVITY_KIND_KERNEL", "kernel"},
	{"CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"},
	{"CUPTI_ACTIVITY_KIND_MEMSET", "memset"},
}

const runtimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME"

// cuptiCopyKinds are CUpti_ActivityMemcpyKind's values, labelled as
// Nsight Systems labels them, for exports without ENUM_CUDA_MEMCPY_OPER.
var cuptiCopyKinds = map[int64]string{0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
	4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
	9: "Host-to-Host", 10: "Peer-to-Peer"}

// pidMask keeps the process part of a serialized globalTid/globalPid:
// Nsight Systems keeps the thread id in the low 24 bits.
const pidMask = ^int64(0xFFFFFF)

type callKey struct{ pid, corr int64 }

// call is an indexed runtime call: small, since a trace holds millions.
type call struct {
	tid  int64
	name int32 // index in decoder.callNames
	dup  bool  // two calls claim the key: it resolves to neither
}

type decoder struct {
	in      *formats.Input
	e       *export
	values  *formats.Values
	strs    map[int64]string
	strsOK  bool
	copy    map[int64]string
	copyEnu bool
	calls   map[callKey]call
	callsOK bool
	// callNames interns the runtime calls' names (a few hundred distinct).
	callNames []string
	nameIndex map[string]int32

	nvtx       *nvtxState      // NVTX_EVENTS' types and names, once read
	conv       evidence.Object // the conversion of an .nsys-rep; nil for a parquetdir
	read       map[string]int64
	counts     map[string]int64
	kernelNS   int64
	unresolved int64
	unnamed    int64
}

func decode(ctx context.Context, in *formats.Input, out formats.Sink) error {
	if in.File == nil {
		return evidence.Failf(evidence.CodeInvalidArgument, "the nsys-parquetdir decoder needs the artifact's file for random access")
	}
	base := strings.TrimSuffix(filepath.Base(in.Artifact.Path), ".parquet")
	if m := variant.FindStringSubmatch(base); base != MetaTable && (m == nil || m[1] != MetaTable) {
		return evidence.Failf(evidence.CodeInvalidArgument,
			"an Nsight Systems parquetdir is read through its %s.parquet; give that file of the export directory, not %s", MetaTable, filepath.Base(in.Artifact.Path))
	}
	if err := in.VerifyFile(); err != nil {
		return err
	}
	e, err := openExport(in, filepath.Dir(in.Artifact.Path), in.Artifact.Path)
	if err != nil {
		return err
	}
	return decodeExport(ctx, in, e, base, out, nil)
}

// decodeExport decodes an open export whose metadata table is base;
// conv, when the export is a conversion, goes into every summary's coverage.
func decodeExport(ctx context.Context, in *formats.Input, e *export, base string, out formats.Sink, conv evidence.Object) error {
	d := &decoder{in: in, e: e, values: in.Values(), read: map[string]int64{}, counts: map[string]int64{}, conv: conv}
	meta, err := d.meta(ctx, base)
	if err != nil {
		return err
	}
	if p := meta["EXPORT_PRODUCT_NAME"]; !strings.Contains(p, "Nsight Systems") {
		return evidence.Failf(evidence.CodeDecodeFailure, "%s names the product %q, not NVIDIA Nsight Systems: not an Nsight Systems export", base, p).At(in.Artifact.Path, "")
	}
	var present []deviceTable
	var absent []string
	for _, dt := range deviceTables {
		if n, ok := e.resolve(dt.name); ok {
			present = append(present, deviceTable{n, dt.kind})
		} else {
			absent = append(absent, dt.name)
		}
	}
	host := false
	for _, n := range []string{runtimeTable, "CUPTI_ACTIVITY_KIND_DRIVER", syncTable, nvtxTable, "OSRT_API"} {
		if _, ok := e.resolve(n); ok {
			host = true
		}
	}
	if len(present) == 0 && !host {
		return (&evidence.Failure{Code: evidence.CodeDecodeFailure,
			Message: "the export holds no CUDA activity and no NVTX or OS runtime events (no CUPTI_ACTIVITY_KIND_KERNEL, MEMCPY, MEMSET, RUNTIME or NVTX_EVENTS table): capture with nsys profile --trace=cuda,nvtx, and export every table",
			Details: evidence.Object{"tables": e.tableNames()}}).At(in.Artifact.Path, "")
	}
	if err := d.loadStrings(ctx); err != nil {
		return err
	}
	if err := d.loadCopyKinds(ctx); err != nil {
		return err
	}
	if out.Wants(table.GPULaunches.Schema) {
		if err := d.launches(ctx, out, present, absent, meta); err != nil {
			return err
		}
	}
	if out.Wants(table.TraceSlices.Schema) {
		if err := d.slices(ctx, out, present); err != nil {
			return err
		}
	}
	if out.Wants(table.TraceTracks.Schema) {
		st, err := d.nvtxMeta(ctx)
		if err != nil {
			return err
		}
		var domains map[int64]string
		if st != nil {
			domains = st.domains
		}
		return d.tracks(ctx, out, domains)
	}
	return nil
}

// launches emits gpu.launches.
func (d *decoder) launches(ctx context.Context, out formats.Sink, present []deviceTable, absent []string, meta map[string]string) error {
	if err := d.loadCalls(ctx); err != nil {
		return err
	}
	lt := formats.NewLazyTable(out, table.GPULaunches.Header(""))
	for _, dt := range present {
		if err := d.emit(ctx, dt, lt); err != nil {
			return lt.Abort(err, &evidence.Summary{RowsObserved: d.total(), Complete: false,
				Limitations: []string{"decoding stopped at a malformed or unreadable table; the rows before it are a prefix"}})
		}
	}
	return lt.End(d.summary(meta, absent))
}

func (d *decoder) total() int64 {
	var n int64
	for _, c := range d.counts {
		n += c
	}
	return n
}

func (d *decoder) summary(meta map[string]string, absent []string) *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.total(), Complete: true, Metrics: map[string]evidence.Metric{}}
	read := evidence.Object{}
	for k, v := range d.read {
		read[k] = v
	}
	s.Coverage = evidence.Object{
		"product_version": nullable(meta["EXPORT_PRODUCT_VERSION"]),
		"schema_version":  nullable(meta["EXPORT_SCHEMA_VERSION"]),
		"tables_read":     read,
		"members":         d.e.memberList(),
	}
	d.cover(s)
	for _, k := range []string{"kernel", "memcpy", "memset"} {
		s.Metrics[k+"_records"] = evidence.Metric{Value: d.counts[k], Unit: "count"}
	}
	s.Metrics["kernel_time_ns"] = evidence.Metric{Value: d.kernelNS, Unit: "ns"}
	s.Metrics["unresolved_launch_calls"] = evidence.Metric{Value: d.unresolved, Unit: "count"}
	s.Limit(d.memberLimit())
	if len(absent) == len(deviceTables) {
		s.Limit("the export has no CUDA device activity table (KERNEL, MEMCPY, MEMSET): capture with nsys profile --trace=cuda to see launches")
	}
	if len(absent) > 0 {
		sort.Strings(absent)
		s.Coverage["device_tables_absent"] = absent
		s.Complete = false
		s.Limit(fmt.Sprintf("the export has no %s table: that activity was not traced or not exported, which does not show it did not happen", strings.Join(absent, ", ")))
	}
	if !d.callsOK {
		s.Limit("launch_api is null: the export has no " + runtimeTable + " table to resolve correlation ids")
	} else if d.unresolved > 0 {
		s.Limit(fmt.Sprintf("%d records have no CUDA runtime call with their process and correlation id (driver API launches, or calls outside the capture range)", d.unresolved))
	}
	if d.unnamed > 0 {
		s.Limit(fmt.Sprintf("%d kernels have no name in any of demangledName, shortName, mangledName", d.unnamed))
	}
	if _, ok := d.e.resolve("CUPTI_ACTIVITY_KIND_GRAPH_TRACE"); ok {
		s.Limit("CUDA graph launches are counted by the kernels and copies they ran (graph_node_id); CUPTI_ACTIVITY_KIND_GRAPH_TRACE's whole-graph records are not launches and are not read")
	}
	d.values.Summarize(s)
	return s
}

// cover adds the conversion's coverage (converter, version, cache) to a
// summary, for an .nsys-rep.
func (d *decoder) cover(s *evidence.Summary) {
	for k, v := range d.conv {
		s.Coverage[k] = v
	}
}

// memberLimit says where the rows came from beyond the artifact.
func (d *decoder) memberLimit() string {
	if d.conv != nil {
		return "the artifact is the .nsys-rep report; the rows come from its nsys export --type parquetdir conversion, whose tables are named by size and digest under coverage.members"
	}
	return "the artifact is the export's META_DATA_EXPORT.parquet; the other tables read are named by size and digest under coverage.members (flameox-preserve keeps the whole directory)"
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// meta reads the name/value pairs of META_DATA_EXPORT (the artifact).
func (d *decoder) meta(ctx context.Context, base string) (map[string]string, error) {
	t, err := d.e.open(base)
	if err != nil {
		return nil, err
	}
	defer t.close(d.e)
	if _, ok := t.cols["name"]; !ok {
		return nil, evidence.Failf(evidence.CodeDecodeFailure, "%s has no name column: not an Nsight Systems export", base).At(d.in.Artifact.Path, "")
	}
	m := map[string]string{}
	err = t.each(ctx, d.e, func(_ int64, vals []parquet.Value) error {
		if len(m) >= 4096 {
			return evidence.Failf(evidence.CodeDecodeFailure, "%s holds more than 4096 entries: not an Nsight Systems export", base)
		}
		n, v := t.col(vals, "name"), t.col(vals, "value")
		if !n.null() && n.v.Kind() == parquet.ByteArray {
			val := ""
			if !v.null() && v.v.Kind() == parquet.ByteArray {
				val = string(v.v.ByteArray())
			}
			m[string(n.v.ByteArray())] = val
		}
		return nil
	})
	return m, err
}

// loadStrings reads StringIds (id → text), when the export has it.
func (d *decoder) loadStrings(ctx context.Context) error {
	name, ok := d.e.resolve("StringIds")
	if !ok {
		return nil
	}
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	d.strs, d.strsOK = map[int64]string{}, true
	var held int64
	max := d.in.Limit(limitStrings.Name)
	err = t.each(ctx, d.e, func(row int64, vals []parquet.Value) error {
		id, ok, err := t.col(vals, "id").integer()
		if err != nil || !ok {
			return d.bad(name, "id", row, err, "a string without an id")
		}
		v := t.col(vals, "value")
		if v.null() || v.v.Kind() != parquet.ByteArray {
			return d.bad(name, "value", row, nil, "a string id without text")
		}
		if _, dup := d.strs[id]; dup {
			return d.bad(name, "id", row, nil, fmt.Sprintf("string id %d is defined twice", id))
		}
		held += int64(len(v.v.ByteArray()))
		if held > max {
			return d.in.Exceeded(limitStrings.Name, nil)
		}
		d.strs[id] = string(v.v.ByteArray())
		return nil
	})
	d.read[name] = t.rows
	return err
}

// loadCopyKinds reads the export's memcpy kind labels, when it has them.
func (d *decoder) loadCopyKinds(ctx context.Context) error {
	d.copy = cuptiCopyKinds
	name, ok := d.e.resolve("ENUM_CUDA_MEMCPY_OPER")
	if !ok {
		return nil
	}
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	labels := map[int64]string{}
	err = t.each(ctx, d.e, func(row int64, vals []parquet.Value) error {
		id, ok, err := t.col(vals, "id").integer()
		l := t.col(vals, "label")
		if err != nil || !ok || l.null() || l.v.Kind() != parquet.ByteArray {
			return d.bad(name, "label", row, err, "an enum entry without an id or label")
		}
		labels[id] = string(l.v.ByteArray())
		return nil
	})
	if err == nil {
		d.copy, d.copyEnu = labels, true
		d.read[name] = t.rows
	}
	return err
}

// loadCalls indexes the CUDA runtime calls by process and correlation id.
func (d *decoder) loadCalls(ctx context.Context) error {
	name, ok := d.e.resolve(runtimeTable)
	if !ok {
		return nil
	}
	t, err := d.e.open(name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	if t.rows > d.in.Limit(limitCalls.Name) {
		return d.in.Exceeded(limitCalls.Name, t.rows)
	}
	d.calls, d.callsOK, d.nameIndex = make(map[callKey]call, t.rows), true, map[string]int32{}
	err = t.each(ctx, d.e, func(row int64, vals []parquet.Value) error {
		corr, ok, err := t.col(vals, "correlationId").integer()
		if err != nil {
			return d.bad(name, "correlationId", row, err, "")
		}
		tid, tok, err := t.col(vals, "globalTid").integer()
		if err != nil {
			return d.bad(name, "globalTid", row, err, "")
		}
		if !ok || !tok {
			return nil // a call without a correlation id launches nothing we can join
		}
		nm, _, err := d.text(t, vals, "nameId", row)
		if err != nil {
			return err
		}
		k := callKey{tid & pidMask, corr}
		if _, dup := d.calls[k]; dup {
			d.calls[k] = call{dup: true}
			return nil
		}
		ni, ok := d.nameIndex[nm]
		if !ok {
			ni = int32(len(d.callNames))
			d.callNames = append(d.callNames, nm)
			d.nameIndex[nm] = ni
		}
		d.calls[k] = call{name: ni, tid: tid}
		return nil
	})
	d.read[name] = t.rows
	return err
}

// text reads a name column: a StringIds reference, or the text itself.
func (d *decoder) text(t *ptable, vals []parquet.Value, col string, row int64) (string, bool, error) {
	c := t.col(vals, col)
	if c.null() {
		return "", false, nil
	}
	if k := c.v.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
		return string(c.v.ByteArray()), true, nil
	}
	id, _, err := c.integer()
	if err != nil {
		return "", false, d.bad(t.Name, col, row, err, "")
	}
	if !d.strsOK {
		return "", false, d.bad(t.Name, col, row, nil, fmt.Sprintf("string id %d cannot resolve: the export has no StringIds table", id))
	}
	s, ok := d.strs[id]
	if !ok {
		return "", false, d.bad(t.Name, col, row, nil, fmt.Sprintf("string id %d does not resolve in StringIds", id))
	}
	return s, true, nil
}

// bad is the failure of a malformed cell.
func (d *decoder) bad(tableName, col string, row int64, err error, what string) error {
	msg := what
	if err != nil {
		msg = err.Error()
	}
	f := evidence.Failf(evidence.CodeDecodeFailure, "table %s row %d column %s: %s", tableName, row, col, msg).At(d.in.Artifact.Path, "")
	f.Location.Field = tableName + "." + col
	return f
}

// mapped are the native columns each launch row has a column for; the
// others go under value.
var mapped = map[string]bool{"start": true, "end": true, "deviceId": true, "contextId": true, "streamId": true,
	"correlationId": true, "globalPid": true, "demangledName": true, "shortName": true, "mangledName": true,
	"registersPerThread": true, "gridX": true, "gridY": true, "gridZ": true, "blockX": true, "blockY": true, "blockZ": true,
	"staticSharedMemory": true, "dynamicSharedMemory": true, "graphNodeId": true, "bytes": true, "copyKind": true}

// mappedFor: a memset's native value column is the byte it sets, which
// has no column of its own, so it stays under value with the rest.
func (d *decoder) emit(ctx context.Context, dt deviceTable, lt *formats.LazyTable) error {
	t, err := d.e.open(dt.name)
	if err != nil {
		return err
	}
	defer t.close(d.e)
	for _, c := range []string{"start", "end", "deviceId"} {
		if _, ok := t.cols[c]; !ok {
			return evidence.Failf(evidence.CodeDecodeFailure, "table %s has no %s column", dt.name, c).At(d.in.Artifact.Path, "")
		}
	}
	if dt.kind == "kernel" {
		if _, ok := t.cols["demangledName"]; !ok {
			if _, ok := t.cols["shortName"]; !ok {
				if _, ok := t.cols["mangledName"]; !ok {
					return evidence.Failf(evidence.CodeDecodeFailure, "table %s has no name column (demangledName, shortName, mangledName)", dt.name).At(d.in.Artifact.Path, "")
				}
			}
		}
	}
	var extra []int
	for i, n := range t.names {
		if !mapped[n] {
			extra = append(extra, i)
		}
	}
	row := &table.GPULaunch{}
	err = t.each(ctx, d.e, func(ri int64, vals []parquet.Value) error {
		*row = table.GPULaunch{SourceTable: dt.name, Kind: dt.kind}
		num := func(col string) (table.Null[int64], error) {
			n, ok, err := t.col(vals, col).integer()
			if err != nil {
				return table.Null[int64]{}, d.bad(dt.name, col, ri, err, "")
			}
			return table.Null[int64]{V: n, Valid: ok}, nil
		}
		var start, end, dev table.Null[int64]
		var err error
		for _, f := range []struct {
			col string
			dst *table.Null[int64]
		}{{"start", &start}, {"end", &end}, {"deviceId", &dev}, {"contextId", &row.ContextID}, {"streamId", &row.StreamID},
			{"correlationId", &row.CorrelationID}, {"globalPid", &row.GlobalPID}, {"graphNodeId", &row.GraphNodeID}} {
			if *f.dst, err = num(f.col); err != nil {
				return err
			}
		}
		if !start.Valid || !end.Valid || !dev.Valid {
			return d.bad(dt.name, "start", ri, nil, "a record without start, end or deviceId")
		}
		if end.V < start.V {
			return d.bad(dt.name, "end", ri, nil, fmt.Sprintf("the record ends (%d) before it starts (%d)", end.V, start.V))
		}
		row.StartNS, row.EndNS, row.DeviceID, row.DurationNS = start.V, end.V, dev.V, end.V-start.V
		switch dt.kind {
		case "kernel":
			if err := d.kernel(t, vals, ri, row, num); err != nil {
				return err
			}
			d.kernelNS += row.DurationNS
		case "memcpy":
			if row.Bytes, err = num("bytes"); err != nil {
				return err
			}
			ck, err := num("copyKind")
			if err != nil {
				return err
			}
			label := "Unknown"
			if ck.Valid {
				if l, ok := d.copy[ck.V]; ok {
					label = l
				} else {
					label = fmt.Sprintf("copy kind %d", ck.V)
				}
				row.CopyKind = table.Some(label)
			}
			row.Name = "[CUDA memcpy " + label + "]"
		case "memset":
			if row.Bytes, err = num("bytes"); err != nil {
				return err
			}
			row.Name = "[CUDA memset]"
		}
		if d.callsOK && row.CorrelationID.Valid && row.GlobalPID.Valid {
			if c, ok := d.calls[callKey{row.GlobalPID.V & pidMask, row.CorrelationID.V}]; ok && !c.dup {
				row.LaunchAPI, row.LaunchTID = table.Some(d.values.Bound(d.callNames[c.name])), table.Some(c.tid)
			}
		}
		if !row.LaunchAPI.Valid {
			d.unresolved++
		}
		if len(extra) > 0 {
			v := make(evidence.Object, len(extra))
			for _, i := range extra {
				v[t.names[i]] = cell{v: vals[i], unsigned: t.unsigned[i], present: true}.native(d.values)
			}
			row.Value = v
		}
		d.counts[dt.kind]++
		return lt.Row(row)
	})
	d.read[dt.name] = t.rows
	return err
}

func (d *decoder) kernel(t *ptable, vals []parquet.Value, ri int64, row *table.GPULaunch, num func(string) (table.Null[int64], error)) error {
	var err error
	for _, f := range []struct {
		col string
		dst *table.Null[int64]
	}{{"gridX", &row.GridX}, {"gridY", &row.GridY}, {"gridZ", &row.GridZ}, {"blockX", &row.BlockX}, {"blockY", &row.BlockY},
		{"blockZ", &row.BlockZ}, {"registersPerThread", &row.Registers}, {"staticSharedMemory", &row.StaticShared},
		{"dynamicSharedMemory", &row.DynamicShared}} {
		if *f.dst, err = num(f.col); err != nil {
			return err
		}
	}
	names := [3]string{}
	ok := [3]bool{}
	for i, col := range []string{"demangledName", "shortName", "mangledName"} {
		if names[i], ok[i], err = d.text(t, vals, col, ri); err != nil {
			return err
		}
	}
	switch {
	case ok[0]:
		row.Name = names[0]
	case ok[1]:
		row.Name = names[1]
	case ok[2]:
		row.Name = names[2]
	default:
		d.unnamed++
	}
	row.Name = d.values.Bound(row.Name)
	if ok[1] {
		row.ShortName = table.Some(d.values.Bound(names[1]))
	}
	if ok[2] {
		row.MangledName = table.Some(d.values.Bound(names[2]))
	}
	return nil
}
