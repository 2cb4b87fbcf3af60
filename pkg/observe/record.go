package observe

import (
	"encoding/json"
	"errors"
	"math/bits"
	"strconv"

	"github.com/flameox/flameox/internal/jsonscan"
)

// Record is one parsed line of an observations file.
type Record struct {
	Kind  string // KindObservation, KindPhaseStart or KindPhaseEnd
	Name  string // observations only
	Phase string // "" when null
	Unit  string // "" when null; observations only
	Value any    // observations only: nil, bool, string, json.Number, []any, evidence.Object
	TS    int64  // nanoseconds since the Unix epoch
	PID   int64
}

// Record fields, as bits of a set.
const (
	fieldV uint8 = 1 << iota
	fieldKind
	fieldName
	fieldPhase
	fieldUnit
	fieldValue
	fieldTS
	fieldPID
)

// recordFields names the fields in the order of their bits.
var recordFields = [...]string{"v", "kind", "name", "phase", "unit", "value", "ts", "pid"}

// ParseRecord parses and validates one record line (its newline may be
// included). Syntax errors are *jsonscan.Error; everything outside the
// grammar or its bounds wraps ErrBounds. The line length bound is the
// caller's: it must be applied before the line is read whole.
func ParseRecord(line []byte) (*Record, error) {
	s := jsonscan.NewBytes(line)
	s.MaxDepth = MaxDepth + 2 // the record object, its value, and one more for a precise message
	tok, err := s.Next()
	if err != nil {
		return nil, err
	}
	if tok.Kind != jsonscan.ObjectStart {
		return nil, boundsf("a record must be a JSON object")
	}
	var r Record
	var seen uint8 // fieldV… bits
	for {
		k, err := s.Next()
		if err != nil {
			return nil, err
		}
		if k.Kind == jsonscan.ObjectEnd {
			break
		}
		// Comparing string(bytes) does not allocate; keys outside the
		// grammar are copied only for the message.
		i := 0
		for i < len(recordFields) && string(k.Bytes) != recordFields[i] {
			i++
		}
		if i == len(recordFields) {
			return nil, boundsf("field %q is not part of record version %d", k.Bytes, Version)
		}
		key, bit := recordFields[i], uint8(1)<<i
		v, err := s.Next()
		if err != nil {
			return nil, err
		}
		seen |= bit
		switch bit {
		case fieldV:
			n, err := integer(key, v)
			if err != nil {
				return nil, err
			}
			if n != Version {
				return nil, boundsf("record version %d is not %d", n, Version)
			}
		case fieldKind:
			if v.Kind != jsonscan.String {
				return nil, boundsf("kind must be a string")
			}
			switch string(v.Bytes) {
			case KindObservation:
				r.Kind = KindObservation
			case KindPhaseStart:
				r.Kind = KindPhaseStart
			case KindPhaseEnd:
				r.Kind = KindPhaseEnd
			default:
				return nil, boundsf("kind must be %s, %s or %s", KindObservation, KindPhaseStart, KindPhaseEnd)
			}
		case fieldName:
			if v.Kind != jsonscan.String {
				return nil, boundsf("name must be a string")
			}
			r.Name = string(v.Bytes)
			if err := CheckLabel("name", r.Name); err != nil {
				return nil, err
			}
		case fieldPhase, fieldUnit:
			if v.Kind == jsonscan.Null {
				continue
			}
			if v.Kind != jsonscan.String {
				return nil, boundsf("%s must be a string or null", key)
			}
			label := string(v.Bytes)
			if err := CheckLabel(key, label); err != nil {
				return nil, err
			}
			if bit == fieldPhase {
				r.Phase = label
			} else {
				r.Unit = label
			}
		case fieldValue:
			if r.Value, err = buildValue(s, v); err != nil {
				return nil, err
			}
		case fieldTS, fieldPID:
			n, err := integer(key, v)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, boundsf("%s %d is negative", key, n)
			}
			if bit == fieldTS {
				r.TS = n
			} else {
				r.PID = n
			}
		}
	}
	if err := s.CheckEnd(); err != nil {
		return nil, err
	}
	if missing := (fieldV | fieldKind | fieldTS | fieldPID) &^ seen; missing != 0 {
		return nil, boundsf("field %q is missing", recordFields[bits.TrailingZeros8(missing)])
	}
	switch r.Kind {
	case KindObservation:
		if seen&fieldName == 0 || seen&fieldValue == 0 {
			return nil, boundsf("an observation needs name and value")
		}
	default:
		if r.Phase == "" {
			return nil, boundsf("a %s record needs a non-null phase", r.Kind)
		}
		if seen&(fieldName|fieldValue|fieldUnit) != 0 {
			return nil, boundsf("a %s record has no name, value or unit", r.Kind)
		}
	}
	return &r, nil
}

// integer reads a JSON integer literal; booleans and fractions are refused.
func integer(key string, t jsonscan.Token) (int64, error) {
	switch t.Kind {
	case jsonscan.True, jsonscan.False:
		return 0, boundsf("%s must be an integer, not a boolean", key)
	case jsonscan.Number:
		n, err := strconv.ParseInt(string(t.Bytes), 10, 64)
		if err != nil {
			return 0, boundsf("%s must be a 64-bit integer, not %s", key, t.Bytes)
		}
		return n, nil
	}
	return 0, boundsf("%s must be an integer", key)
}

// buildValue reads a recorded value within the SDK's bounds: nesting,
// entries per collection, and finite numbers.
func buildValue(s *jsonscan.Scanner, t jsonscan.Token) (any, error) {
	v, err := s.Value(t, jsonscan.ValueLimits{MaxDepth: MaxDepth, MaxEntries: MaxEntries,
		Number: func(lit []byte) (any, error) {
			if err := checkNumber(string(lit)); err != nil {
				return nil, err
			}
			return json.Number(lit), nil
		}})
	var be *jsonscan.BoundError
	if errors.As(err, &be) {
		switch be.Bound {
		case "depth":
			return nil, boundsf("value nests deeper than %d levels", MaxDepth)
		default:
			return nil, boundsf("a collection has more than %d entries", MaxEntries)
		}
	}
	return v, err
}
