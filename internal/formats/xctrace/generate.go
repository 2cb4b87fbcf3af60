package xctrace

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Generate writes an xctrace export of at least size bytes built from a
// real one (seed, one node): the seed as it is, then its rows repeated,
// each cell written as xctrace writes a value it has written before (a
// ref to the cell's id), except the sample time, which is new in every
// row (a fresh id, shifted past the seed's last sample), as in a real
// export. It serves benchmarks, which need inputs far larger than a
// fixture.
func Generate(w io.Writer, seed []byte, size int64) error {
	end := bytes.LastIndex(seed, []byte("</node>"))
	if end < 0 {
		return errors.New("generate: the seed has no </node>")
	}
	type cell struct {
		name, id string
		time     bool
		ts       int64
		raw      string // a cell without an id, written as it is
	}
	var rows [][]cell
	maxID, lastTS := int64(0), int64(0)
	x := xml.NewDecoder(bytes.NewReader(seed[:end]))
	depth, rowDepth := 0, -1
	var cur []cell
	var cellStart int64
	for {
		off := x.InputOffset()
		tok, err := x.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			for _, a := range t.Attr {
				if a.Name.Local == "id" {
					if n, err := strconv.ParseInt(a.Value, 10, 64); err == nil && n > maxID {
						maxID = n
					}
				}
			}
			if t.Name.Local == "row" {
				rowDepth, cur = depth, nil
			} else if rowDepth >= 0 && depth == rowDepth+1 {
				c := cell{name: t.Name.Local, time: t.Name.Local == "sample-time"}
				for _, a := range t.Attr {
					if a.Name.Local == "id" || a.Name.Local == "ref" {
						c.id = a.Value
					}
				}
				cellStart = off
				cur = append(cur, c)
			}
			depth++
		case xml.CharData:
			if rowDepth >= 0 && depth == rowDepth+2 && len(cur) > 0 && cur[len(cur)-1].time {
				n, err := strconv.ParseInt(string(bytes.TrimSpace(t)), 10, 64)
				if err == nil {
					cur[len(cur)-1].ts = n
					lastTS = max(lastTS, n)
				}
			}
		case xml.EndElement:
			depth--
			switch {
			case t.Name.Local == "row" && depth == rowDepth:
				rows, rowDepth = append(rows, cur), -1
			case rowDepth >= 0 && depth == rowDepth+1 && cur[len(cur)-1].id == "" && t.Name.Local != "sentinel":
				cur[len(cur)-1].raw = string(seed[cellStart:x.InputOffset()])
			}
		}
	}
	if len(rows) == 0 {
		return errors.New("generate: the seed has no rows")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	n, err := bw.Write(seed[:end])
	written := int64(n)
	if err != nil {
		return err
	}
	id, shift := maxID, lastTS
	var b []byte
	for round := 0; written < size; round++ {
		for _, r := range rows {
			b = append(b[:0], "<row>"...)
			for _, c := range r {
				switch {
				case c.time:
					id++
					ts := c.ts + shift
					b = fmt.Appendf(b, `<sample-time id="%d">%d</sample-time>`, id, ts)
				case c.name == "sentinel":
					b = append(b, "<sentinel/>"...)
				case c.id != "":
					b = fmt.Appendf(b, `<%s ref="%s"/>`, c.name, c.id)
				default:
					b = append(b, c.raw...)
				}
			}
			b = append(b, "</row>\n"...)
			n, err := bw.Write(b)
			written += int64(n)
			if err != nil {
				return err
			}
		}
		shift += lastTS
	}
	if _, err := bw.WriteString("</node>\n</trace-query-result>\n"); err != nil {
		return err
	}
	return bw.Flush()
}
