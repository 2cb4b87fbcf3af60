package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// genV8 writes a V8 CPU profile of at least size bytes built from a real
// one: the real call tree, and its real sample sequence (with its time
// deltas) repeated until the file is large enough. Only the sample count
// grows, which is the dimension the decoder must not hold in memory.
func genV8(seed, out string, size int64) error {
	b, err := os.ReadFile(seed)
	if err != nil {
		return err
	}
	var p struct {
		Nodes      json.RawMessage `json:"nodes"`
		StartTime  int64           `json:"startTime"`
		EndTime    int64           `json:"endTime"`
		Samples    []int64         `json:"samples"`
		TimeDeltas []int64         `json:"timeDeltas"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("%s: %w", seed, err)
	}
	if len(p.Samples) == 0 || len(p.Samples) != len(p.TimeDeltas) {
		return fmt.Errorf("%s: needs samples and matching timeDeltas", seed)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"nodes":%s,"startTime":%d,"samples":[`, p.Nodes, p.StartTime)
	// Repeat the real sequence enough times for both arrays to fill size.
	var per int64
	for i := range p.Samples {
		per += int64(len(strconv.FormatInt(p.Samples[i], 10)) + len(strconv.FormatInt(p.TimeDeltas[i], 10)) + 2)
	}
	reps := int(size/per) + 1
	var buf []byte
	for r := 0; r < reps; r++ {
		for i, s := range p.Samples {
			if r > 0 || i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, s, 10)
			if len(buf) > 1<<16 {
				w.Write(buf)
				buf = buf[:0]
			}
		}
	}
	w.Write(buf)
	buf = buf[:0]
	w.WriteString(`],"timeDeltas":[`)
	var total int64
	for r := 0; r < reps; r++ {
		for i, d := range p.TimeDeltas {
			if r > 0 || i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, d, 10)
			total += d
			if len(buf) > 1<<16 {
				w.Write(buf)
				buf = buf[:0]
			}
		}
	}
	w.Write(buf)
	fmt.Fprintf(w, `],"endTime":%d}`, p.StartTime+total)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	if st.Size() < size {
		return fmt.Errorf("generated only %d bytes, wanted %d", st.Size(), size)
	}
	return nil
}
