package chrometrace

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestTexts: every text comes back equal to its bytes, through hits,
// slot collisions (texts that share length and edges) and texts too long
// to keep.
func TestTexts(t *testing.T) {
	var c texts
	var want []string
	for i := range 3000 {
		want = append(want, fmt.Sprintf("aaaaaaaa%04dbbbbbbbb", i), fmt.Sprint(i%17), "", strings.Repeat("x", 250+i%20))
	}
	for round := range 2 {
		for _, w := range want {
			if got := c.get([]byte(w)); got != w {
				t.Fatalf("round %d: get(%q) = %q", round, w, got)
			}
		}
	}
}

// TestBoxes: a number and a string of the same text stay apart (the
// string "1" is not the number 1), and values are what Scanner.Value
// makes.
func TestBoxes(t *testing.T) {
	var c boxes
	for round := range 2 {
		for i := range 500 {
			lit := fmt.Sprint(i % 37)
			n, s := c.number([]byte(lit)), c.str([]byte(lit))
			if n != json.Number(lit) {
				t.Fatalf("round %d: number(%s) = %#v", round, lit, n)
			}
			if s != lit {
				t.Fatalf("round %d: str(%s) = %#v", round, lit, s)
			}
		}
	}
	long := strings.Repeat("7", textMax+1)
	if c.number([]byte(long)) != json.Number(long) || c.str([]byte(long)) != long {
		t.Fatal("a long value is not kept whole")
	}
}
