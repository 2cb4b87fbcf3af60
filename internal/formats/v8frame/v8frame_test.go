package v8frame

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/jsonscan"
)

func parse(t *testing.T, doc string) (CallFrame, error) {
	t.Helper()
	w := &jsonscan.Walker{S: jsonscan.NewBytes([]byte(doc))}
	return Parse(w)
}

func TestParse(t *testing.T) {
	cf, err := parse(t, `{"functionName":"fib","scriptId":"7","url":"file:///a.js","lineNumber":3,"columnNumber":12,"codeType":"JS"}`)
	if err != nil || cf != (CallFrame{Function: "fib", ScriptID: "7", URL: "file:///a.js", Line: 3, Column: 12}) {
		t.Fatalf("%+v %v", cf, err)
	}
	// Older profiles write scriptId as a number; absent positions are -1.
	cf, err = parse(t, `{"functionName":"(root)","scriptId":0,"url":""}`)
	if err != nil || cf != (CallFrame{Function: "(root)", ScriptID: "0", Line: -1, Column: -1}) || !cf.Synthetic() {
		t.Fatalf("%+v %v", cf, err)
	}
	if _, err := parse(t, `{"scriptId":{}}`); err == nil || !strings.Contains(err.Error(), "callFrame.scriptId must be a string") {
		t.Fatalf("object scriptId: %v", err)
	}
	if (CallFrame{Function: "(root)", URL: "file:///a.js"}).Synthetic() {
		t.Fatal("a reserved name with a script URL is the script's")
	}
}

// TestIDStable: frame ids are evidence keys; they must not change
// between releases (or between the CPU and heap decoders).
func TestIDStable(t *testing.T) {
	id, buf := CallFrame{Function: "fib", ScriptID: "7", URL: "file:///a.js", Line: 3, Column: 12}.ID(nil)
	id2, _ := CallFrame{Function: "fib", ScriptID: "7", URL: "file:///a.js", Line: 3, Column: 12}.ID(buf)
	// The value the decoders wrote before the frame code was shared.
	if id != "v8:0ae8382d7df0fde8" || id2 != id {
		t.Fatalf("%s %s", id, id2)
	}
	if other, _ := (CallFrame{Function: "fib", ScriptID: "7", URL: "file:///a.js", Line: 3, Column: 13}).ID(nil); other == id {
		t.Fatal("column is part of the identity")
	}
}
