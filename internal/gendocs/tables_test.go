package main

import (
	"os"
	"testing"
)

// docs/tables.md is the contract consumers read; it must say what the
// declarations say (bundle's TestContractMatchesParquet checks that the
// files say it too).
func TestTablesDoc(t *testing.T) {
	got, err := os.ReadFile("../../docs/tables.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != tablesMarkdown() {
		t.Fatal("docs/tables.md is stale: run `go run ./internal/gendocs`")
	}
}
