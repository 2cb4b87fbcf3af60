package evidence

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The exit-status table in docs/evidence.md must match Codes.
func TestExitCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/evidence.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Codes {
		name := "(none)"
		if c.Code != "" {
			name = "`" + string(c.Code) + "`"
		}
		row := fmt.Sprintf("| %s | %d | %s |", name, c.Exit, c.Meaning)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/evidence.md lacks the row %s", row)
		}
	}
}
