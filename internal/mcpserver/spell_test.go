package mcpserver

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func TestSpellNamesMCPArguments(t *testing.T) {
	for _, tc := range []struct{ in, nested, want string }{
		{"preview the file with --artifact-format text", "", "preview the file with format text"},
		{"decode with --option offset=5 --option max_bytes=9", "analysis.", "decode with analysis.options.offset=5 analysis.options.max_bytes=9"},
		{"raise --limits max_nodes=100", "", "raise limits.max_nodes=100"},
		{"lower --top", "", "lower top"},
		{"see --format jsonl", "", `see detail "full"`},
		{"no flags here", "", "no flags here"},
	} {
		if got := spell(tc.in, tc.nested); got != tc.want {
			t.Errorf("spell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	f := evidence.Object{"message": "use --artifact-format csv", "retry": evidence.Object{"action": "set --option header=false"}}
	spellFailure(f, "")
	if f["message"] != "use format csv" || f["retry"].(evidence.Object)["action"] != "set options.header=false" {
		t.Errorf("failure = %v", f)
	}
}

// The descriptions of every generated tool name MCP arguments: a flag of
// ours in one would tell the model to use what it cannot.
func TestDescriptionsNameNoFlags(t *testing.T) {
	s, err := New(Options{BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range s.Tools() {
		for _, flag := range []string{"--artifact-format", "--option", "--limits", "--top", "--workload-budget", "--format"} {
			if strings.Contains(tool.Description, flag) {
				t.Errorf("%s: description names the flag %s: %q", tool.Name, flag, tool.Description)
			}
		}
	}
}
