package chrometrace

import (
	"bytes"
	"compress/gzip"
	"io"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
)

// Kineto writes these top-level members before traceEvents; Chrome's
// writers have none of them.
var kinetoKeys = map[string]bool{"schemaVersion": true, "deviceProperties": true, "distributedInfo": true, "baseTimeNanoseconds": true}

// look says what a document prefix is: a trace (an object whose members
// include traceEvents, or an array whose first element is an event),
// and whether Kineto's members come first. cut is true when the prefix
// ended before look could tell.
func look(doc []byte) (trace, kineto, cut bool) {
	s := jsonscan.NewBytes(doc)
	s.CheckDuplicates = false
	tok, err := s.Next()
	if err != nil {
		return false, false, true
	}
	switch tok.Kind {
	case jsonscan.ObjectStart:
		var kinetoKey, schema, tef bool
		// A prefix that ends inside the members before traceEvents is a
		// trace when one of them is the format's samples or stackFrames
		// (a writer may put them first, and they can be long).
		cutAt := func() (bool, bool, bool) { return tef, false, !tef }
		for {
			k, err := s.Next()
			if err != nil {
				return cutAt()
			}
			if k.Kind != jsonscan.String {
				return false, false, false // the object ended without traceEvents
			}
			key := string(k.Bytes)
			if key == "traceEvents" {
				v, err := s.Next()
				if err != nil {
					return false, false, true
				}
				return v.Kind == jsonscan.ArrayStart, schema && kinetoKey, false
			}
			if key == "schemaVersion" {
				schema = true
			} else if kinetoKeys[key] {
				kinetoKey = true
			}
			v, err := s.Next()
			if err != nil {
				return cutAt()
			}
			if (key == "samples" || key == "stackFrames") && v.Offset < int64(len(doc)) {
				tef = tef || tefShape(key, doc[v.Offset:])
			}
			if err := s.Skip(v); err != nil {
				return cutAt()
			}
			if schema && kinetoKey {
				return true, true, false
			}
		}
	case jsonscan.ArrayStart:
		el, err := s.Next()
		if err != nil {
			return false, false, true
		}
		if el.Kind != jsonscan.ObjectStart {
			return false, false, false
		}
		var ph, other bool
		for {
			k, err := s.Next()
			if err != nil {
				return false, false, true
			}
			if k.Kind != jsonscan.String {
				return ph && other, false, false
			}
			switch string(k.Bytes) {
			case "ph":
				ph = true
			case "ts", "pid", "name":
				other = true
			}
			v, err := s.Next()
			if err != nil {
				return false, false, true
			}
			if err := s.Skip(v); err != nil {
				return false, false, true
			}
		}
	}
	return false, false, false
}

// tefShape reports whether b starts as the format's samples (an array
// whose first element has sf or stack) or stackFrames (an object whose
// first entry is a frame: name, category, parent and nothing else).
func tefShape(key string, b []byte) bool {
	s := jsonscan.NewBytes(b)
	s.CheckDuplicates = false
	first, err := s.Next()
	if err != nil {
		return false
	}
	if key == "samples" {
		if el, err := s.Next(); first.Kind != jsonscan.ArrayStart || err != nil || el.Kind != jsonscan.ObjectStart {
			return false
		}
	} else {
		id, err := s.Next()
		if first.Kind != jsonscan.ObjectStart || err != nil || id.Kind != jsonscan.String {
			return false
		}
		if f, err := s.Next(); err != nil || f.Kind != jsonscan.ObjectStart {
			return false
		}
	}
	frame := false
	for n := 0; n < 16; n++ {
		k, err := s.Next()
		if err != nil || k.Kind != jsonscan.String {
			return frame
		}
		switch string(k.Bytes) {
		case "sf", "stack":
			if key == "samples" {
				return true
			}
		case "name", "category", "parent":
			frame = key == "stackFrames"
		default:
			if key == "stackFrames" {
				return false
			}
		}
		v, err := s.Next()
		if err != nil || s.Skip(v) != nil {
			return false
		}
	}
	return false
}

// sniffDoc answers for a prefix, gzip'd or not.
func sniffDoc(prefix []byte, wantKineto bool) formats.Verdict {
	whole := len(prefix) < formats.SniffBytes
	doc := prefix
	if bytes.HasPrefix(prefix, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(prefix))
		if err != nil {
			if whole {
				return formats.No
			}
			return formats.NeedMore
		}
		var buf bytes.Buffer
		_, err = io.Copy(&buf, io.LimitReader(zr, 256<<10))
		whole = whole && err == nil
		doc = buf.Bytes()
	}
	doc = bytes.TrimLeft(doc, " \t\r\n")
	if len(doc) == 0 || (doc[0] != '{' && doc[0] != '[') {
		if len(doc) == 0 && !whole {
			return formats.NeedMore
		}
		return formats.No
	}
	trace, kineto, cut := look(doc)
	switch {
	case cut && whole:
		return formats.No
	case cut:
		return formats.NeedMore
	case trace && kineto == wantKineto:
		return formats.Yes
	}
	return formats.No
}

func sniffChrome(prefix []byte) formats.Verdict { return sniffDoc(prefix, false) }
func sniffKineto(prefix []byte) formats.Verdict { return sniffDoc(prefix, true) }
