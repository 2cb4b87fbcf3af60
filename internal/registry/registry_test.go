package registry

import (
	"os"
	"testing"
)

func TestRegistryConsistent(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err)
	}
}

func TestSupportDocUpToDate(t *testing.T) {
	got, err := os.ReadFile("../../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != SupportMarkdown() {
		t.Fatal("docs/support.md is stale: run `go run ./internal/gendocs`")
	}
}
