package jsonpreview

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/formats/preview"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

// JSON value types, in the order type unions are written.
var typeNames = [...]string{"object", "array", "string", "number", "boolean", "null"}

// typeOf returns the index in typeNames of the value a token starts.
func typeOf(k jsonscan.Kind) int {
	switch k {
	case jsonscan.ObjectStart:
		return 0
	case jsonscan.ArrayStart:
		return 1
	case jsonscan.String:
		return 2
	case jsonscan.Number:
		return 3
	case jsonscan.True, jsonscan.False:
		return 4
	}
	return 5
}

// builder reads values within a record's byte budget: the values of one
// record share max_record_bytes from the record's first byte.
type builder struct {
	s *jsonscan.Scanner
	// start and limit bound the value's native bytes (limit 0: unbounded).
	start, limit int64
}

// build reads the rest of the value whose first token is tok; crossing
// the budget is jsonscan.ErrBound.
func (b *builder) build(tok jsonscan.Token) (any, error) {
	var end int64
	if b.limit > 0 {
		end = b.start + b.limit
	}
	return b.s.Value(tok, jsonscan.ValueLimits{End: end, Number: func(lit []byte) (any, error) { return number(lit), nil }})
}

// number keeps a literal exact: integers of any size stay json.Number (the
// canonical encoder writes big ones as exact strings). A non-integer beyond
// the double range is the infinity RFC 8785's double domain gives it, which
// the encoder writes in the tagged non-finite form.
func number(lit []byte) any {
	if !bytes.ContainsAny(lit, ".eE") {
		return json.Number(lit)
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil && math.IsInf(f, 0) {
		return f
	}
	return json.Number(lit)
}

// fieldStats derives preview.fields from the top-level keys of object
// records, tracking at most max distinct keys.
type fieldStats struct {
	pending []member // a JSONL line's keys, added once the line parses
	max     int64
	off     bool // the sink declines preview.fields
	fields  []*table.Field
	types   []uint8 // bit i: typeNames[i] observed
	index   map[string]int
	omitted int64
}

// member is one top-level key of a record and its value's type.
type member struct {
	key string
	typ int
}

// intern returns key as a string, reusing the tracked field's name so that
// known keys cost no allocation.
func (fs *fieldStats) intern(key []byte) string {
	if i, ok := fs.index[string(key)]; ok {
		return fs.fields[i].Name
	}
	return string(key)
}

func newFieldStats(max int64, want bool) *fieldStats {
	return &fieldStats{max: max, off: !want, index: map[string]int{}}
}

func (fs *fieldStats) add(key string, typ int) {
	if fs.off {
		return
	}
	i, ok := fs.index[key]
	if !ok {
		if int64(len(fs.fields)) >= fs.max {
			fs.omitted++
			return
		}
		i = len(fs.fields)
		fs.index[key] = i
		fs.fields = append(fs.fields, &table.Field{Position: int64(i), Name: key, Path: []string{key}, Nulls: table.Some(int64(0))})
		fs.types = append(fs.types, 0)
	}
	f := fs.fields[i]
	f.Observed++
	if typ == 5 {
		f.Nulls.V++
	}
	fs.types[i] |= 1 << typ
}

// result fills the fields of a preview result.
func (fs *fieldStats) result(r *preview.Result) {
	for i, f := range fs.fields {
		var names []string
		for t, n := range typeNames {
			if fs.types[i]&(1<<t) != 0 {
				names = append(names, n)
			}
		}
		f.Type = strings.Join(names, "|")
	}
	r.Fields = fs.fields
	r.FieldsOmitted = fs.omitted
	r.MaxFields = fs.max
}
