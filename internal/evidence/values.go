package evidence

import (
	"encoding/json"
	"math"
	"strconv"
)

// AsInt reads an integer from a canonical value: a JSON integer, or an
// exact decimal string (how integers beyond the safe range travel).
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= MaxSafeInteger {
			return int64(x), true
		}
	}
	return 0, false
}

// AsFloat reads a double from a canonical value, including the tagged
// non-finite form.
func AsFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case Object:
		if t, _ := x["type"].(string); t == "double" {
			switch x["value"] {
			case "NaN":
				return math.NaN(), true
			case "Infinity":
				return math.Inf(1), true
			case "-Infinity":
				return math.Inf(-1), true
			}
		}
	}
	return 0, false
}
