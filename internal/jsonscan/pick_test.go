package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// pickBoth walks doc's top-level object with Pick and with Members
// (skipping what Pick would not pick), whole and read in small chunks, and
// reports each outcome: the picked members with their values, the error,
// and where the scanner stopped.
func pickBoth(doc []byte) (pick, members string) {
	want := func(k []byte) bool { return len(k) > 0 && k[0] < 'm' }
	run := func(usePick bool, chunk int) string {
		s := NewBytes(doc)
		if chunk > 0 {
			s = New(&chunkReader{b: doc, n: chunk})
		}
		w := Walker{S: s}
		var got strings.Builder
		fn := func(k []byte) error {
			key := string(k)
			tok, err := w.Value()
			if err != nil {
				return err
			}
			fmt.Fprintf(&got, "%s=%s:%s;", key, tok.Kind, tok.Bytes)
			return w.Skip(tok)
		}
		tok, err := w.Value()
		if err == nil {
			if usePick {
				err = w.Pick(tok, "doc", want, fn)
			} else {
				err = w.Members(tok, "doc", func(k []byte) error {
					if !want(k) {
						return w.SkipValue()
					}
					return fn(k)
				})
			}
		}
		if err == nil {
			err = s.CheckEnd()
		}
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		return fmt.Sprintf("%s %s @%d line %d", got.String(), msg, s.Offset(), s.Line())
	}
	pick = run(true, 0)
	if c := run(true, 5); c != pick {
		return pick + " / read in chunks: " + c, run(false, 0)
	}
	return pick, run(false, 0)
}

var pickSeeds = append([]string{
	`{"a":1,"z":{"q":[1,2]},"b":"x","y":2,"c":{"d":1}}`,
	`{"z":1,"z":2}`, `{"a":1,"z":2,"a":3}`, `{"z":1,"a":2,"z":3}`, `{"z":1,}`, `{"z":"\u00e9","a":1}`,
	`{"a":"\u00e9","z":[1,"\n"],"b":2}`, `{"z" :1 , "a" : 2 }`, "{\"z\":\n1,\n\"a\":2}", `{"z":[1,2],"a":{}}x`,
	`{"z":{"z":{"z":1}},"a":[]}`, `{"z":01,"a":1}`, `{"z":1`, `{"z":1,"a"`, `[1]`, `"s"`, `{}`, `{"z":NaN}`,
	`{"\u007a":1,"z":2}`, `{"a\"b":1,"z":2}`,
}, skipSeeds...)

func TestPickAgrees(t *testing.T) {
	for _, d := range pickSeeds {
		if p, m := pickBoth([]byte(d)); p != m {
			t.Errorf("%q:\n Pick    %s\n Members %s", d, p, m)
		}
	}
	var big strings.Builder
	big.WriteString("{")
	for i := range 100 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `"%c%d":[%d,{"v":%d}]`, 'a'+i%26, i, i, i)
	}
	for _, tail := range []string{"}", `,"z51":1}`, `,"b1":1}`, `,"z99":"\t"}`} {
		d := big.String() + tail
		if p, m := pickBoth([]byte(d)); p != m {
			t.Errorf("large object +%s:\n Pick    %s\n Members %s", tail, p, m)
		}
	}
}

func FuzzPick(f *testing.F) {
	for _, d := range pickSeeds {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if p, m := pickBoth(doc); p != m {
			t.Fatalf("%q:\n Pick    %s\n Members %s", doc, p, m)
		}
	})
}
