// Package v8frame reads the callFrame objects V8's profilers write in
// their call trees (the DevTools protocol's Runtime.CallFrame), shared by
// the CPU (v8cpu) and sampling heap (v8heap) profile decoders, and names
// a frame the same way in both, so one function has one frame id across
// a CPU and a heap profile of the same script.
//
// It imports jsonscan.
package v8frame

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/flameox/flameox/internal/jsonscan"
)

// CallFrame is a call-tree node's frame identity.
type CallFrame struct {
	Function string
	ScriptID string
	URL      string
	Line     int64 // 0-based; -1 when absent
	Column   int64 // 0-based; -1 when absent
}

// Parse reads one callFrame object. Unknown keys are skipped; scriptId
// may be a string or, in older profiles, a number, kept as written.
func Parse(w *jsonscan.Walker) (CallFrame, error) {
	cf := CallFrame{Line: -1, Column: -1}
	err := w.Object("callFrame", func(key []byte) error {
		var err error
		switch string(key) {
		case "functionName":
			cf.Function, err = w.String("callFrame.functionName")
		case "url":
			cf.URL, err = w.String("callFrame.url")
		case "scriptId":
			var t jsonscan.Token
			if t, err = w.Value(); err != nil {
				return err
			}
			if t.Kind != jsonscan.String && t.Kind != jsonscan.Number {
				return w.S.Errorf(t, "callFrame.scriptId must be a string, found %s", t.Kind)
			}
			cf.ScriptID = string(t.Bytes)
		case "lineNumber":
			cf.Line, err = w.Int("callFrame.lineNumber")
		case "columnNumber":
			cf.Column, err = w.Int("callFrame.columnNumber")
		default:
			err = w.SkipValue()
		}
		return err
	})
	return cf, err
}

// syntheticNames are the nodes V8 makes itself rather than a script.
var syntheticNames = map[string]bool{"(root)": true, "(program)": true, "(idle)": true, "(garbage collector)": true}

// Synthetic reports whether the frame is one V8 made itself: a reserved
// name without a script URL.
func (cf CallFrame) Synthetic() bool { return syntheticNames[cf.Function] && cf.URL == "" }

// ID hashes the frame's identity, reusing buf: the same frame in two
// profiles of the same script gets the same id.
func (cf CallFrame) ID(buf []byte) (string, []byte) {
	buf = append(buf[:0], cf.Function...)
	buf = append(buf, 0)
	buf = append(buf, cf.ScriptID...)
	buf = append(buf, 0)
	buf = append(buf, cf.URL...)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, cf.Line, 10)
	buf = append(buf, 0)
	buf = strconv.AppendInt(buf, cf.Column, 10)
	sum := sha256.Sum256(buf)
	return "v8:" + hex.EncodeToString(sum[:8]), buf
}
