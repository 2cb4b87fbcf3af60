package perfetto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// genShift is how far each repetition of the seed moves in time (in ns):
// past the end of a startup trace of a few seconds.
const genShift = 60_000_000_000

// Generate writes at least size bytes of Perfetto trace built from a
// real trace seed (gzip'd or not), repeated: repetition k gives every
// trusted_packet_sequence_id its own new id (so each copy's incremental
// state stands alone) and moves every absolute time k minutes later:
// packet timestamps on absolute clocks and every clock of the clock
// snapshots (in each clock's units); deltas on incremental clocks stay
// as they are. Tracks keep their uuids, so a copy's slices follow the
// previous copy's on the same tracks. For benchmarks.
func Generate(w io.Writer, seed []byte, size int64) error {
	if bytes.HasPrefix(seed, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(seed))
		if err != nil {
			return err
		}
		if seed, err = io.ReadAll(zr); err != nil {
			return err
		}
	}
	var maxSeq uint64
	var packets [][]byte
	for b := seed; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return errors.New("perfetto: the seed is not a trace")
		}
		p, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return errors.New("perfetto: the seed is truncated")
		}
		packets = append(packets, p)
		b = b[n+m:]
		if v, ok := varintField(p, fSequenceID); ok && v > maxSeq {
			maxSeq = v
		}
	}
	if len(packets) == 0 {
		return errors.New("perfetto: empty seed")
	}
	var out []byte
	var written int64
	for k := int64(0); written < size; k++ {
		g := gen{seqBase: uint64(k) * (maxSeq + 1), shift: k * genShift, clocks: map[[2]uint64]genClock{}, defClock: map[uint64]uint64{}}
		for _, p := range packets {
			out = protowire.AppendTag(out[:0], 1, protowire.BytesType)
			body := g.packet(p)
			out = protowire.AppendBytes(out, body)
			if _, err := w.Write(out); err != nil {
				return err
			}
			written += int64(len(out))
		}
	}
	return nil
}

type genClock struct {
	mult        uint64
	incremental bool
}

// gen rewrites the packets of one repetition.
type gen struct {
	seqBase  uint64
	shift    int64
	clocks   map[[2]uint64]genClock // sequence-scoped clocks by (original sequence, id)
	defClock map[uint64]uint64      // a sequence's default clock
}

func varintField(p []byte, want protowire.Number) (uint64, bool) {
	for len(p) > 0 {
		num, typ, n := protowire.ConsumeTag(p)
		if n < 0 {
			return 0, false
		}
		m := protowire.ConsumeFieldValue(num, typ, p[n:])
		if m < 0 {
			return 0, false
		}
		if num == want && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(p[n:])
			return v, true
		}
		p = p[n+m:]
	}
	return 0, false
}

func (g *gen) packet(p []byte) []byte {
	seq, _ := varintField(p, fSequenceID)
	clock, hasClock := varintField(p, fTimestampClockID)
	out := make([]byte, 0, len(p)+16)
	for len(p) > 0 {
		num, typ, n := protowire.ConsumeTag(p)
		m := protowire.ConsumeFieldValue(num, typ, p[n:])
		field := p[:n+m]
		val := p[n : n+m]
		p = p[n+m:]
		switch {
		case num == fSequenceID && typ == protowire.VarintType && g.seqBase > 0:
			v, _ := protowire.ConsumeVarint(val)
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendVarint(out, v+g.seqBase)
		case num == fTimestamp && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(val)
			id := clock
			if !hasClock {
				id = g.defClock[seq]
			}
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendVarint(out, g.shifted(seq, id, v))
		case num == fClockSnapshot && typ == protowire.BytesType:
			body, _ := protowire.ConsumeBytes(val)
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, g.snapshot(seq, body))
		case num == fPacketDefaults && typ == protowire.BytesType:
			body, _ := protowire.ConsumeBytes(val)
			if v, ok := varintField(body, fTimestampClockID); ok {
				g.defClock[seq] = v
			}
			out = append(out, field...)
		default:
			out = append(out, field...)
		}
	}
	return out
}

// shifted moves a packet's time on clock id, unless that clock counts
// deltas.
func (g *gen) shifted(seq, id, v uint64) uint64 {
	if id >= firstSeqClock && id < firstNonSeqClk {
		c, ok := g.clocks[[2]uint64{seq, id}]
		if !ok || c.incremental {
			return v
		}
		return v + uint64(g.shift)/c.mult
	}
	return v + uint64(g.shift)
}

func (g *gen) snapshot(seq uint64, b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		val := b[n : n+m]
		field := b[:n+m]
		b = b[n+m:]
		if num != 1 || typ != protowire.BytesType {
			out = append(out, field...)
			continue
		}
		clk, _ := protowire.ConsumeBytes(val)
		id, _ := varintField(clk, 1)
		mult, ok := varintField(clk, 4)
		if !ok || mult == 0 {
			mult = 1
		}
		incr, _ := varintField(clk, 3)
		if id >= firstSeqClock && id < firstNonSeqClk {
			g.clocks[[2]uint64{seq, id}] = genClock{mult: mult, incremental: incr != 0}
		}
		var c []byte
		for len(clk) > 0 {
			num, typ, n := protowire.ConsumeTag(clk)
			m := protowire.ConsumeFieldValue(num, typ, clk[n:])
			if num == 2 && typ == protowire.VarintType {
				v, _ := protowire.ConsumeVarint(clk[n:])
				c = protowire.AppendTag(c, 2, protowire.VarintType)
				c = protowire.AppendVarint(c, v+uint64(g.shift)/mult)
			} else {
				c = append(c, clk[:n+m]...)
			}
			clk = clk[n+m:]
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, c)
	}
	return out
}
