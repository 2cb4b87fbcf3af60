package table

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/flameox/flameox/internal/evidence"
)

// Go field types and the column types they declare:
//
//	string, Null[string]          string
//	int64, Null[int64]            int
//	float64, Null[float64]        double
//	bool, Null[bool]              bool
//	any, []string, []int64,
//	[]any, evidence.Object        json (nil is null)
//
// Null[T] is null when not Valid; the other scalars are never null.
type kind uint8

const (
	kString kind = iota
	kInt
	kFloat
	kBool
	kJSON
)

var kindType = [...]string{kString: evidence.TypeString, kInt: evidence.TypeInt, kFloat: evidence.TypeDouble,
	kBool: evidence.TypeBool, kJSON: evidence.TypeJSON}

type field struct {
	name  string
	index []int  // struct field index path (through embedded structs); nil for the artifact column
	kind  kind   // of the value (of V for Null)
	null  bool   // a Null[T] field
	col   int    // index in Schema.Columns
	key   []byte // `,"name":` (`{"name":` for the first)
	// keyw holds key when it fits (keyn its length, else 0): one 32-byte
	// store writes it, where an append would call memmove per column.
	keyw [32]byte
	keyn int
	// off is the scalar's byte offset in the row struct (V's for Null),
	// valid its Valid flag's: AppendValues reads scalars there, without
	// reflection (embedded structs are by value, so one offset holds).
	off, valid uintptr
	scalar     reflect.Kind // String, Int64, Int, Float64 or Bool; Invalid for the others
	json       jsonType     // a json column of one of the plain types, read at off
}

// jsonType names the json column types AppendValues reads at their offset
// and hands to the canonical encoder as they are; others (named element
// types) go through reflection.
type jsonType uint8

const (
	jNone jsonType = iota
	jObject
	jAny
	jStrings
	jInts
	jAnys
)

var (
	stringsType = reflect.TypeFor[[]string]()
	intsType    = reflect.TypeFor[[]int64]()
	anysType    = reflect.TypeFor[[]any]()
)

// codec encodes and reads one row type. fields are in canonical (sorted)
// key order; column order is the declaration order.
type codec struct {
	typ    reflect.Type
	ptr    reflect.Type // *typ
	fields []field
	byName map[string]int // column name → index in fields
}

var (
	objectType = reflect.TypeFor[evidence.Object]()
	anyType    = reflect.TypeFor[any]()
)

func kindOf(t reflect.Type) (kind, bool) {
	switch t.Kind() {
	case reflect.String:
		return kString, true
	case reflect.Int64, reflect.Int:
		return kInt, true
	case reflect.Float64:
		return kFloat, true
	case reflect.Bool:
		return kBool, true
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.String, reflect.Int64, reflect.Interface:
			return kJSON, true
		}
	case reflect.Interface:
		return kJSON, t == anyType
	case reflect.Map:
		return kJSON, t == objectType
	}
	return 0, false
}

func newCodec(t reflect.Type, fromArtifact bool) (*codec, []Column, error) {
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("row type %s is not a struct", t)
	}
	c := &codec{typ: t, ptr: reflect.PointerTo(t), byName: map[string]int{}}
	var cols []Column
	if fromArtifact {
		cols = append(cols, Column{Name: ArtifactColumn, Type: evidence.TypeString, Identity: true,
			Description: "artifact the row was read from"})
		c.fields = append(c.fields, field{name: ArtifactColumn, kind: kString})
		c.byName[ArtifactColumn] = -1
	}
	cols, err := c.addFields(t, nil, cols)
	if err != nil {
		return nil, nil, err
	}
	// Canonical key order: RFC 8785 sorts by UTF-16 code units, which for
	// these ASCII names is byte order.
	sort.Slice(c.fields, func(i, j int) bool { return c.fields[i].name < c.fields[j].name })
	for i := range c.fields {
		f := &c.fields[i]
		c.byName[f.name] = i
		// The key with what precedes it in the object, so a row's
		// encoder appends one slice per column.
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		f.key, _ = evidence.AppendCanonical([]byte{sep}, f.name)
		f.key = append(f.key, ':')
		if len(f.key) <= len(f.keyw) {
			f.keyn = copy(f.keyw[:], f.key)
		}
	}
	return c, cols, nil
}

var nullableType = reflect.TypeFor[nullable]()

// addFields appends the columns of struct type t, whose fields stand at
// path in the row type. An embedded struct without a col tag contributes
// its columns in its place, so a result row that carries an input row
// (a ranked edge) declares its columns once, in the input's type.
func (c *codec) addFields(t reflect.Type, path []int, cols []Column) ([]Column, error) {
	for i := range t.NumField() {
		sf := t.Field(i)
		index := append(slices.Clip(path), i)
		tag, ok := sf.Tag.Lookup("col")
		if !ok && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			if !sf.IsExported() {
				return nil, fmt.Errorf("embedded %s is not exported", sf.Name)
			}
			var err error
			if cols, err = c.addFields(sf.Type, index, cols); err != nil {
				return nil, err
			}
			continue
		}
		if !ok {
			return nil, fmt.Errorf("field %s has no col tag", sf.Name)
		}
		parts := strings.Split(tag, ",")
		col := Column{Name: parts[0], Description: sf.Tag.Get("doc")}
		for _, p := range parts[1:] {
			switch {
			case p == "identity":
				col.Identity = true
			case strings.HasPrefix(p, "unit="):
				col.Unit = strings.TrimPrefix(p, "unit=")
			case p == "detail":
				col.Detail = true
			case strings.HasPrefix(p, "base="):
				col.Base = strings.TrimPrefix(p, "base=")
				if err := checkBase(col); err != nil {
					return nil, fmt.Errorf("field %s: %w", sf.Name, err)
				}
			default:
				return nil, fmt.Errorf("field %s: unknown tag option %q", sf.Name, p)
			}
		}
		f := field{name: col.Name, index: index, col: len(cols), off: offset(c.typ, index)}
		ft := sf.Type
		if reflect.PointerTo(ft).Implements(nullableType) && ft.Kind() == reflect.Struct {
			f.null = true
			f.valid = f.off + ft.Field(1).Offset
			f.off += ft.Field(0).Offset
			ft = ft.Field(0).Type
		}
		switch ft.Kind() {
		case reflect.String, reflect.Int64, reflect.Int, reflect.Float64, reflect.Bool:
			f.scalar = ft.Kind()
		}
		switch ft {
		case objectType:
			f.json = jObject
		case anyType:
			f.json = jAny
		case stringsType:
			f.json = jStrings
		case intsType:
			f.json = jInts
		case anysType:
			f.json = jAnys
		}
		k, ok := kindOf(ft)
		if !ok {
			return nil, fmt.Errorf("field %s: type %s has no column type", sf.Name, sf.Type)
		}
		if f.null && k == kJSON {
			return nil, fmt.Errorf("field %s: a json column is nullable already; drop Null", sf.Name)
		}
		f.kind, col.Type = k, kindType[k]
		col.Nullable = f.null || k == kJSON
		if _, dup := c.byName[col.Name]; dup {
			return nil, fmt.Errorf("column %s is declared twice", col.Name)
		}
		c.byName[col.Name] = -1
		c.fields = append(c.fields, f)
		cols = append(cols, col)
	}
	return cols, nil
}

// offset is the byte offset of the field at index in struct type t.
func offset(t reflect.Type, index []int) uintptr {
	var off uintptr
	for _, i := range index {
		sf := t.Field(i)
		off += sf.Offset
		t = sf.Type
	}
	return off
}

// value reads a field's canonical value; ok is false for null.
func (f *field) value(row reflect.Value, artifact string) (any, bool) {
	if f.index == nil {
		return artifact, true
	}
	v := row.FieldByIndex(f.index)
	if f.null {
		return v.Addr().Interface().(nullable).nullValue()
	}
	switch f.kind {
	case kString:
		return v.String(), true
	case kInt:
		return v.Int(), true
	case kFloat:
		return v.Float(), true
	case kBool:
		return v.Bool(), true
	}
	if v.IsNil() {
		return nil, false
	}
	return v.Interface(), true
}

// typed returns the struct behind row when it is a *T of this schema.
func (s *Schema) typed(row any) (reflect.Value, bool) {
	v := reflect.ValueOf(row)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != s.codec.typ || v.IsNil() {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

// AppendValues appends the canonical JSON object of a row's values. row is
// a *T of the schema or an evidence.Object holding exactly its columns;
// artifact is the table's artifact id, written in the artifact column of
// FromArtifact schemas.
func (s *Schema) AppendValues(dst []byte, row any, artifact string) ([]byte, error) {
	return s.appendValues(dst, row, artifact, nil)
}

// Encoder appends the values of rows of one schema read from one artifact,
// as AppendValues does, with the artifact id encoded once.
type Encoder struct {
	s        *Schema
	artifact string
	art      []byte // the canonical artifact string; nil: encode per row (and fail as AppendValues does)
}

// Encoder returns the encoder of this schema's rows from artifact.
func (s *Schema) Encoder(artifact string) *Encoder {
	art, err := evidence.AppendString(nil, artifact)
	if err != nil {
		art = nil
	}
	return &Encoder{s: s, artifact: artifact, art: art}
}

// Append appends a row's values (see AppendValues).
func (e *Encoder) Append(dst []byte, row any) ([]byte, error) {
	return e.s.appendValues(dst, row, e.artifact, e.art)
}

// appendValues is AppendValues with the artifact id's canonical string in
// art when the caller has it.
func (s *Schema) appendValues(dst []byte, row any, artifact string, art []byte) ([]byte, error) {
	// A *T of the schema, checked by its type alone (typed's checks,
	// cheaper); the reflect value is made only for the columns that need
	// it.
	var base unsafe.Pointer
	if reflect.TypeOf(row) == s.codec.ptr {
		base = reflect.ValueOf(row).UnsafePointer()
	}
	if base == nil {
		o, err := s.Values(row, artifact)
		if err != nil {
			return dst, err
		}
		return evidence.AppendCanonical(dst, o)
	}
	if len(s.codec.fields) == 0 {
		return append(dst, "{}"...), nil
	}
	var err error
	var rv reflect.Value
	for i := range s.codec.fields {
		f := &s.codec.fields[i]
		// The key, with the '{' or ',' before it.
		if f.keyn != 0 {
			if cap(dst)-len(dst) < len(f.keyw) {
				dst = slices.Grow(dst, len(f.keyw))
			}
			n := len(dst)
			*(*[32]byte)(dst[n : n+32]) = f.keyw
			dst = dst[:n+f.keyn]
		} else {
			dst = append(dst, f.key...)
		}
		if f.index == nil && art != nil {
			dst = append(dst, art...)
			continue
		}
		if f.json != jNone && f.index != nil {
			if dst, err = f.appendJSON(dst, unsafe.Add(base, f.off)); err != nil {
				return dst, fmt.Errorf("table %s: column %s: %w", s.Name, f.name, err)
			}
			continue
		}
		if f.scalar == reflect.Invalid || f.index == nil {
			if !rv.IsValid() {
				rv = reflect.ValueOf(row).Elem()
			}
			if dst, err = f.appendValue(dst, rv, artifact); err != nil {
				return dst, fmt.Errorf("table %s: column %s: %w", s.Name, f.name, err)
			}
			continue
		}
		// The scalars, read at their offsets in the row (what
		// appendValue writes, the same way).
		if f.null && !*(*bool)(unsafe.Add(base, f.valid)) {
			dst = append(dst, "null"...)
			continue
		}
		p := unsafe.Add(base, f.off)
		switch f.scalar {
		case reflect.String:
			if dst, err = evidence.AppendString(dst, *(*string)(p)); err != nil {
				return dst, fmt.Errorf("table %s: column %s: %w", s.Name, f.name, err)
			}
		case reflect.Int64:
			dst = evidence.AppendInt(dst, *(*int64)(p))
		case reflect.Int:
			dst = evidence.AppendInt(dst, int64(*(*int)(p)))
		case reflect.Float64:
			dst = evidence.AppendFloat(dst, *(*float64)(p))
		default:
			if *(*bool)(p) {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		}
	}
	return append(dst, '}'), nil
}

// appendJSON appends the value of a json column of a plain type at p:
// what appendValue writes, without reflection.
func (f *field) appendJSON(dst []byte, p unsafe.Pointer) ([]byte, error) {
	var v any
	switch f.json {
	case jObject:
		if m := *(*evidence.Object)(p); m != nil {
			v = m
		}
	case jAny:
		v = *(*any)(p)
	case jStrings:
		if xs := *(*[]string)(p); xs != nil {
			return evidence.AppendCanonical(dst, xs)
		}
	case jInts:
		if xs := *(*[]int64)(p); xs != nil {
			return evidence.AppendCanonical(dst, xs)
		}
	case jAnys:
		if xs := *(*[]any)(p); xs != nil {
			return evidence.AppendCanonical(dst, xs)
		}
	}
	if v == nil {
		return append(dst, "null"...), nil
	}
	return evidence.AppendCanonical(dst, v)
}

// appendValue appends one field's canonical value without boxing scalars.
func (f *field) appendValue(dst []byte, row reflect.Value, artifact string) ([]byte, error) {
	if f.index == nil {
		return evidence.AppendString(dst, artifact)
	}
	v := row.FieldByIndex(f.index)
	if f.null {
		if !v.Field(1).Bool() {
			return append(dst, "null"...), nil
		}
		v = v.Field(0)
	}
	switch f.kind {
	case kString:
		return evidence.AppendString(dst, v.String())
	case kInt:
		return evidence.AppendInt(dst, v.Int()), nil
	case kFloat:
		return evidence.AppendFloat(dst, v.Float()), nil
	case kBool:
		if v.Bool() {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	}
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	return evidence.AppendCanonical(dst, v.Interface())
}

// Values returns a row's values as an object. A *T becomes a fresh object;
// an evidence.Object is checked against the columns (and, in a
// FromArtifact schema, gets the artifact column) and returned.
func (s *Schema) Values(row any, artifact string) (evidence.Object, error) {
	if rv, ok := s.typed(row); ok {
		o := make(evidence.Object, len(s.codec.fields))
		for i := range s.codec.fields {
			f := &s.codec.fields[i]
			v, ok := f.value(rv, artifact)
			if !ok {
				v = nil
			}
			o[f.name] = v
		}
		return o, nil
	}
	o, ok := row.(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("table %s: a row is a *%s or an object, not %T", s.Name, s.codec.typ.Name(), row)
	}
	if s.FromArtifact {
		// A decoder leaves the column to the sink; "" is treated as unset.
		prev, ok := o[ArtifactColumn]
		switch {
		case ok && artifact != "" && prev != artifact && prev != "":
			return nil, fmt.Errorf("table %s: row names artifact %v, not the table's %s", s.Name, prev, artifact)
		case !ok || artifact != "":
			o[ArtifactColumn] = artifact
		}
	}
	if err := s.Check(o); err != nil {
		return nil, err
	}
	return o, nil
}

// Check verifies that an object has exactly the schema's columns, each of
// its type or null where the column may be null.
func (s *Schema) Check(o evidence.Object) error {
	if len(o) != len(s.codec.fields) {
		for k := range o {
			if _, ok := s.codec.byName[k]; !ok {
				return fmt.Errorf("table %s: row has column %q, which the schema lacks", s.Name, k)
			}
		}
	}
	for i := range s.codec.fields {
		f := &s.codec.fields[i]
		v, ok := o[f.name]
		if !ok {
			return fmt.Errorf("table %s: row lacks column %q", s.Name, f.name)
		}
		if !typeOK(f.kind, v) {
			return fmt.Errorf("table %s: column %q of type %s holds %T", s.Name, f.name, kindType[f.kind], v)
		}
	}
	return nil
}

// typeOK accepts null everywhere: a stream's rows are checked against the
// header's declared types, and null marks "not recorded" in every column.
func typeOK(k kind, v any) bool {
	if v == nil {
		return true
	}
	switch k {
	case kString:
		_, ok := v.(string)
		return ok
	case kInt:
		_, ok := evidence.AsInt(v)
		return ok
	case kFloat:
		_, ok := evidence.AsFloat(v)
		return ok
	case kBool:
		_, ok := v.(bool)
		return ok
	}
	return true
}

// Scan returns row as a *T: a typed row as it is, an object converted
// column by column. The artifact column of a FromArtifact schema is not a
// field; its owner is the table.
func (s Of[T]) Scan(row any) (*T, error) {
	if t, ok := row.(*T); ok {
		return t, nil
	}
	o, ok := row.(evidence.Object)
	if !ok {
		return nil, fmt.Errorf("table %s: a row is a *%s or an object, not %T", s.Name, s.codec.typ.Name(), row)
	}
	out := new(T)
	rv := reflect.ValueOf(out).Elem()
	for i := range s.codec.fields {
		f := &s.codec.fields[i]
		if f.index == nil {
			continue
		}
		v, ok := o[f.name]
		if !ok {
			return nil, fmt.Errorf("table %s: row lacks column %q", s.Name, f.name)
		}
		if err := f.set(rv.FieldByIndex(f.index), v); err != nil {
			return nil, fmt.Errorf("table %s: column %s: %w", s.Name, f.name, err)
		}
	}
	return out, nil
}

func (f *field) set(dst reflect.Value, v any) error {
	if f.null {
		if v == nil {
			dst.Addr().Interface().(interface{ setNull() }).setNull()
			return nil
		}
		dst.Field(1).SetBool(true)
		dst = dst.Field(0)
	} else if v == nil && f.kind != kJSON {
		return fmt.Errorf("null in a column that is never null")
	}
	switch f.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a string, got %T", v)
		}
		dst.SetString(s)
	case kInt:
		n, ok := evidence.AsInt(v)
		if !ok {
			return fmt.Errorf("want an integer, got %v", v)
		}
		dst.SetInt(n)
	case kFloat:
		x, ok := evidence.AsFloat(v)
		if !ok {
			return fmt.Errorf("want a number, got %v", v)
		}
		dst.SetFloat(x)
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want a boolean, got %T", v)
		}
		dst.SetBool(b)
	default:
		return setJSON(dst, v)
	}
	return nil
}

// setJSON stores a json column's value in its field.
func setJSON(dst reflect.Value, v any) error {
	if v == nil {
		dst.SetZero()
		return nil
	}
	switch dst.Type() {
	case anyType:
		dst.Set(reflect.ValueOf(&v).Elem())
		return nil
	case objectType:
		o, ok := v.(evidence.Object)
		if !ok {
			return fmt.Errorf("want an object, got %T", v)
		}
		dst.Set(reflect.ValueOf(o))
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		if rv := reflect.ValueOf(v); rv.Type() == dst.Type() {
			dst.Set(rv)
			return nil
		}
		return fmt.Errorf("want an array, got %T", v)
	}
	out := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
	for i, e := range arr {
		switch dst.Type().Elem().Kind() {
		case reflect.String:
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("element %d: want a string, got %T", i, e)
			}
			out.Index(i).SetString(s)
		case reflect.Int64:
			n, ok := evidence.AsInt(e)
			if !ok {
				return fmt.Errorf("element %d: want an integer, got %v", i, e)
			}
			out.Index(i).SetInt(n)
		default:
			if n, isNum := e.(json.Number); isNum {
				e = n
			}
			out.Index(i).Set(reflect.ValueOf(&e).Elem())
		}
	}
	dst.Set(out)
	return nil
}
