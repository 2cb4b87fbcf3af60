package otlp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Generate writes at least size bytes of OTLP built from a real body
// seed: a protobuf seed repeated end to end (concatenated protobuf
// messages are one message whose repeated resource_spans are all of
// theirs), a JSON seed compacted and repeated one document per line (the
// Collector file exporter's layout). For benchmarks.
func Generate(w io.Writer, seed []byte, size int64) error {
	unit := seed
	if b := bytes.TrimLeft(seed, " \t\r\n"); len(b) > 0 && b[0] == '{' {
		var c bytes.Buffer
		if err := json.Compact(&c, seed); err != nil {
			return err
		}
		c.WriteByte('\n')
		unit = c.Bytes()
	}
	if len(unit) == 0 {
		return errors.New("otlp: empty seed")
	}
	for n := int64(0); n < size; n += int64(len(unit)) {
		if _, err := w.Write(unit); err != nil {
			return err
		}
	}
	return nil
}
