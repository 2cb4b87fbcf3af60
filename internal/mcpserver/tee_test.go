package mcpserver

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/wire"
)

// runTee feeds in through tee and returns what reached decode (nil when
// decode stopped reading at once) and the collector.
func runTee(t *testing.T, in string, decodeReads bool) ([]byte, *collector) {
	t.Helper()
	srcR, srcW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dstR, dstW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(DefaultResultBound)
	done := make(chan struct{})
	go func() { tee(srcR, dstW, c); close(done) }()
	got := make(chan []byte)
	go func() {
		if !decodeReads {
			dstR.Close()
			got <- nil
			return
		}
		b, _ := io.ReadAll(dstR)
		dstR.Close()
		got <- b
	}()
	if _, err := io.WriteString(srcW, in); err != nil {
		t.Fatal(err)
	}
	srcW.Close()
	out := <-got
	<-done
	return out, c
}

func TestTee(t *testing.T) {
	capture, artifact := captureBlock(t, nil), artifactBlock(t)
	in := capture + "\r\n" + artifact + "\n" + `{"kind":"row","schema":"flameox/1","table_id":"x","values":{}}`
	t.Run("forwards every byte and keeps the provenance", func(t *testing.T) {
		out, c := runTee(t, in, true)
		if string(out) != in {
			t.Fatalf("decode read %q", out)
		}
		if c.capture == nil || len(c.artifacts) != 1 || c.bad != nil {
			t.Fatalf("capture %v, artifacts %d, bad %v", c.capture, len(c.artifacts), c.bad)
		}
	})
	t.Run("keeps reading when decode stops", func(t *testing.T) {
		_, c := runTee(t, in, false)
		if c.capture == nil || len(c.artifacts) != 1 {
			t.Fatalf("capture %v, artifacts %d", c.capture, len(c.artifacts))
		}
	})
	t.Run("a line over the bound is malformed", func(t *testing.T) {
		long := `{"kind":"x","pad":"` + strings.Repeat("p", wire.DefaultMaxLine) + `"}`
		out, c := runTee(t, capture+"\n"+long+"\n", true)
		if !bytes.Equal(out, []byte(capture+"\n"+long+"\n")) {
			t.Fatalf("decode read %d bytes", len(out))
		}
		if c.capture == nil || c.bad == nil || !strings.Contains(c.bad.Message, "exceeds") {
			t.Fatalf("capture %v, bad %v", c.capture, c.bad)
		}
	})
}
