package sarif

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/jsonscan"
	"github.com/flameox/flameox/internal/table"
)

type rule struct {
	id       string
	level    string            // defaultConfiguration.level; "" when absent
	messages map[string]string // messageStrings: id → text (bounded)
}

type component struct {
	name  string
	rules []rule
}

// artifactLoc is an artifact location: a run artifact's, or the definition
// of a uriBaseId in originalUriBaseIds.
type artifactLoc struct {
	uri, base string
	hasURI    bool
}

// runState is what a run has revealed so far. Results wait in the
// document's queue until the run parts they refer to have been read, so
// key order inside a run (results before tool, say) never changes a row.
type runState struct {
	index         int
	toolSeen      bool
	driver        component
	extensions    []component
	basesSeen     bool
	bases         map[string]artifactLoc
	artifactsSeen bool
	artifacts     []artifactLoc
	closed        bool
	results       int  // results read in this run
	nullResults   bool // results was null: the tool did not produce them
	failedInvoke  bool // an invocation reported executionSuccessful=false
}

// result is one native result, bounded: message text, arguments and URI
// are size-limited as they are read.
type result struct {
	run   *runState
	index int

	ruleID, ruleRefID            string
	hasRuleID, hasRuleRefID      bool
	ruleIndex, ruleRefIndex      int64
	tcIndex                      int64
	tcName                       string
	kind, level                  string
	msgText, msgID               string
	hasMsgText, msgCut           bool
	msgArgs                      []string
	uri, baseID                  string
	hasURI, uriTooLong           bool
	artIndex                     int64
	startLine, startCol          int64
	endLine, endCol              int64
	regionOffset                 int64 // offset of the result, for failures
	hasLocation, hasPhysLocation bool
}

// size approximates the memory a queued result holds.
func (r *result) size() int64 {
	n := 256 + len(r.ruleID) + len(r.ruleRefID) + len(r.tcName) + len(r.msgText) + len(r.msgID) + len(r.uri) + len(r.baseID)
	for _, a := range r.msgArgs {
		n += 16 + len(a)
	}
	return int64(n)
}

type decoder struct {
	ctx     context.Context
	in      *formats.Input
	root    *Root
	w       jsonscan.Walker
	version string // "" until the version member is read
	queue   []*result
	tw      *formats.LazyTable
	runs    int
	read    int64 // results read
	emitted int64
	levels  map[string]int64
	status  map[string]int64
	limits  struct{ results, rules, artifacts, pending int64 }
	pending int64 // approximate bytes held in queue
	notes   []string
	incomp  bool
}

func newDecoder(ctx context.Context, in *formats.Input, out formats.Sink, root *Root) *decoder {
	d := &decoder{ctx: ctx, in: in, root: root, levels: map[string]int64{}, status: map[string]int64{},
		tw: formats.NewLazyTable(out, &evidence.Table{Name: Table, Columns: table.SARIFResults.EvidenceColumns(""), Evidence: evidence.Observed,
			Arguments: arguments(in, root)})}
	d.limits.results = in.Limit(LimitResults)
	d.limits.rules = in.Limit(LimitRules)
	d.limits.artifacts = in.Limit(LimitArtifacts)
	d.limits.pending = in.Limit(LimitPending)
	return d
}

// run decodes the document. When it fails after rows were emitted, the
// table is still closed, marked incomplete, before the failure returns: a
// partial document is never complete evidence, even if every parsed
// result fit the table.
func (d *decoder) run() error {
	br := bufio.NewReaderSize(d.in.R, 64<<10)
	_, _ = formats.SkipBOM(br) // the scanner reads on and types a read error
	d.w = jsonscan.Walker{S: d.in.JSONScanner(br, 128, formats.LimitToken)}
	if err := d.document(); err != nil {
		return d.abort(err)
	}
	return d.tw.End(d.summary())
}

func (d *decoder) document() error {
	sawRuns := false
	// otherVersion is a version other than 2.1.0, refused as an old SARIF
	// dialect only once the document shows SARIF's shape (a sarif $schema,
	// or runs): a top-level "version" alone is not SARIF's (pyperf writes
	// "version": "1.0").
	var otherVersion *string
	err := d.w.Document("a SARIF log", func(key []byte) error {
		switch string(key) {
		case "version":
			v, _, null, err := d.w.Str("version", 64)
			if err != nil {
				return err
			}
			if null {
				return evidence.Failf(evidence.CodeDecodeFailure, "version is null")
			}
			if v != "2.1.0" {
				if sawRuns {
					return unsupported(v)
				}
				otherVersion = &v
				return nil
			}
			d.version = v
			return d.flush()
		case "$schema":
			v, _, null, err := d.w.Str("$schema", 4096)
			if err != nil {
				return err
			}
			if otherVersion != nil && !null && strings.Contains(strings.ToLower(v), "sarif") {
				return unsupported(*otherVersion)
			}
			return nil
		case "runs":
			if otherVersion != nil {
				return unsupported(*otherVersion)
			}
			sawRuns = true
			return d.runsArray()
		}
		return d.w.SkipValue()
	})
	if err != nil {
		return err
	}
	if !sawRuns {
		msg := "not a SARIF log: the document has no runs member"
		if otherVersion != nil {
			msg += fmt.Sprintf(" (its top-level version %q is not a SARIF version by itself)", *otherVersion)
		}
		return evidence.Failf(evidence.CodeDecodeFailure, "%s", msg)
	}
	if d.version == "" {
		return evidence.Failf(evidence.CodeDecodeFailure, "the log has no version member (SARIF 2.1.0 requires \"version\": \"2.1.0\")")
	}
	return d.flush()
}

func unsupported(v string) error {
	msg := fmt.Sprintf("SARIF version %q is not supported: only SARIF 2.1.0 is decoded", v)
	if strings.HasPrefix(v, "2.0.") || strings.HasPrefix(v, "1.") {
		msg += "; pre-standard dialects name fields differently (fileLocation, ruleMessageId) and would be misread, so convert the log to 2.1.0 (for example with the SARIF Multitool) first"
	}
	return &evidence.Failure{Code: evidence.CodeUnsupportedFormat, Message: msg,
		Details: evidence.Object{"version": v, "supported_versions": []string{"2.1.0"}}}
}

func (d *decoder) runsArray() error {
	null, err := d.w.ArrayOrNull("runs", func(i int, el jsonscan.Token) error {
		r := &runState{index: i}
		d.runs++
		if err := d.runObject(r, el); err != nil {
			return fmt.Errorf("runs[%d]: %w", i, err)
		}
		r.closed = true
		if r.nullResults {
			d.incomp = true
			d.notes = append(d.notes, fmt.Sprintf("runs[%d] has results: null: the tool did not produce results, so no rows for it is not evidence of no findings", i))
		}
		if r.failedInvoke {
			d.incomp = true
			d.notes = append(d.notes, fmt.Sprintf("runs[%d] reports an invocation with executionSuccessful=false: its results may be partial", i))
		}
		return d.flush()
	})
	if null {
		// SARIF: runs is null when the tool failed before it could run.
		d.incomp = true
		d.notes = append(d.notes, "runs is null: the tool did not run, so no rows is not evidence of no findings")
	}
	return err
}

func (d *decoder) runObject(r *runState, tok jsonscan.Token) error {
	return d.w.Members(tok, "a run", func(key []byte) error {
		switch string(key) {
		case "tool":
			if err := d.tool(r); err != nil {
				return fmt.Errorf("tool: %w", err)
			}
			r.toolSeen = true
			return d.flush()
		case "originalUriBaseIds":
			if err := d.bases(r); err != nil {
				return fmt.Errorf("originalUriBaseIds: %w", err)
			}
			r.basesSeen = true
			return d.flush()
		case "artifacts":
			if err := d.artifacts(r); err != nil {
				return fmt.Errorf("artifacts: %w", err)
			}
			r.artifactsSeen = true
			return d.flush()
		case "invocations":
			return d.invocations(r)
		case "results":
			null, err := d.w.ArrayOrNull("results", func(i int, el jsonscan.Token) error {
				if err := d.ctx.Err(); err != nil {
					return err
				}
				d.read++
				if d.read > d.limits.results {
					return d.in.ExceededAt(LimitResults, nil, el.Offset)
				}
				res, err := d.result(r, i, el)
				if err != nil {
					return fmt.Errorf("results[%d]: %w", i, err)
				}
				r.results++
				d.queue = append(d.queue, res)
				d.pending += res.size()
				if err := d.flush(); err != nil {
					return err
				}
				if d.pending > d.limits.pending {
					return d.in.ExceededAt(LimitPending, d.pending, el.Offset)
				}
				return nil
			})
			r.nullResults = null
			return err
		}
		return d.w.SkipValue()
	})
}

func (d *decoder) tool(r *runState) error {
	var nrules int64
	return d.w.Object("tool", func(key []byte) error {
		switch string(key) {
		case "driver":
			return d.component(&r.driver, &nrules)
		case "extensions":
			return d.w.Array("extensions", func(i int, el jsonscan.Token) error {
				var c component
				if err := d.componentFrom(&c, el, &nrules); err != nil {
					return fmt.Errorf("extensions[%d]: %w", i, err)
				}
				r.extensions = append(r.extensions, c)
				return nil
			})
		}
		return d.w.SkipValue()
	})
}

func (d *decoder) component(c *component, nrules *int64) error {
	tok, err := d.w.Value()
	if err != nil {
		return err
	}
	return d.componentFrom(c, tok, nrules)
}

func (d *decoder) componentFrom(c *component, tok jsonscan.Token, nrules *int64) error {
	return d.w.Members(tok, "a tool component", func(key []byte) error {
		switch string(key) {
		case "name":
			return d.text(&c.name, "name")
		case "rules":
			_, err := d.w.ArrayOrNull("rules", func(i int, el jsonscan.Token) error {
				*nrules++
				if *nrules > d.limits.rules {
					return d.in.ExceededAt(LimitRules, nil, el.Offset)
				}
				ru, err := d.rule(el)
				if err != nil {
					return fmt.Errorf("rules[%d]: %w", i, err)
				}
				c.rules = append(c.rules, ru)
				return nil
			})
			return err
		}
		return d.w.SkipValue()
	})
}

func (d *decoder) rule(tok jsonscan.Token) (rule, error) {
	var ru rule
	err := d.w.Members(tok, "a rule", func(key []byte) error {
		switch string(key) {
		case "id":
			return d.text(&ru.id, "id")
		case "defaultConfiguration":
			_, err := d.w.ObjectOrNull("defaultConfiguration", func(key []byte) error {
				if string(key) != "level" {
					return d.w.SkipValue()
				}
				lv, _, null, err := d.w.Str("level", 16)
				if err != nil {
					return err
				}
				if !null {
					if !validLevel(lv) {
						return fmt.Errorf("defaultConfiguration.level %q is not error, warning, note or none", lv)
					}
					ru.level = lv
				}
				return nil
			})
			return err
		case "messageStrings":
			_, err := d.w.ObjectOrNull("messageStrings", func(key []byte) error {
				id := string(key)
				return d.w.Object("a message string", func(k []byte) error {
					if string(k) != "text" {
						return d.w.SkipValue()
					}
					s, _, _, err := d.w.Str("text", MessageBytes)
					if ru.messages == nil {
						ru.messages = map[string]string{}
					}
					ru.messages[id] = s
					return err
				})
			})
			return err
		}
		return d.w.SkipValue()
	})
	return ru, err
}

// text reads a string member into *dst, cut at MessageBytes.
func (d *decoder) text(dst *string, what string) error {
	s, _, _, err := d.w.Str(what, MessageBytes)
	*dst = s
	return err
}

// integer reads an integer member into *dst.
func (d *decoder) integer(dst *int64, what string) error {
	n, err := d.w.Int(what)
	*dst = n
	return err
}

func validLevel(s string) bool {
	switch s {
	case "error", "warning", "note", "none":
		return true
	}
	return false
}

func validKind(s string) bool {
	switch s {
	case "fail", "pass", "open", "review", "informational", "notApplicable":
		return true
	}
	return false
}

func (d *decoder) bases(r *runState) error {
	r.bases = map[string]artifactLoc{}
	_, err := d.w.ObjectOrNull("originalUriBaseIds", func(key []byte) error {
		id := string(key)
		var b artifactLoc
		err := d.artifactLocation(&b)
		r.bases[id] = b
		return err
	})
	return err
}

// artifactLocation reads the next value, an artifact location, into a.
func (d *decoder) artifactLocation(a *artifactLoc) error {
	return d.w.Object("an artifact location", func(k []byte) error {
		switch string(k) {
		case "uri":
			s, cut, null, err := d.w.Str("uri", uriBytes+1)
			if cut {
				s = strings.Repeat("x", uriBytes+1) // parseRef rejects it as too long
			}
			a.uri, a.hasURI = s, !null
			return err
		case "uriBaseId":
			return d.text(&a.base, "uriBaseId")
		}
		return d.w.SkipValue()
	})
}

func (d *decoder) artifacts(r *runState) error {
	_, err := d.w.ArrayOrNull("artifacts", func(i int, el jsonscan.Token) error {
		if int64(i) >= d.limits.artifacts {
			return d.in.ExceededAt(LimitArtifacts, nil, el.Offset)
		}
		var a artifactLoc
		err := d.w.Members(el, "an artifact", func(key []byte) error {
			if string(key) != "location" {
				return d.w.SkipValue()
			}
			return d.artifactLocation(&a)
		})
		if err != nil {
			return fmt.Errorf("artifacts[%d]: %w", i, err)
		}
		r.artifacts = append(r.artifacts, a)
		return nil
	})
	return err
}

func (d *decoder) invocations(r *runState) error {
	_, err := d.w.ArrayOrNull("invocations", func(i int, el jsonscan.Token) error {
		return d.w.Members(el, "an invocation", func(key []byte) error {
			if string(key) != "executionSuccessful" {
				return d.w.SkipValue()
			}
			ok, err := d.w.Bool("executionSuccessful")
			if err == nil && !ok {
				r.failedInvoke = true
			}
			return err
		})
	})
	return err
}

func (d *decoder) result(r *runState, i int, tok jsonscan.Token) (*result, error) {
	res := &result{run: r, index: i, ruleIndex: -1, ruleRefIndex: -1, tcIndex: -1, artIndex: -1,
		startLine: -1, startCol: -1, endLine: -1, endCol: -1, regionOffset: tok.Offset}
	err := d.w.Members(tok, "a result", func(key []byte) error {
		switch string(key) {
		case "ruleId":
			s, _, null, err := d.w.Str("ruleId", MessageBytes)
			res.ruleID, res.hasRuleID = s, !null
			return err
		case "ruleIndex":
			return d.integer(&res.ruleIndex, "ruleIndex")
		case "rule":
			return d.ruleRef(res)
		case "kind":
			s, _, _, err := d.w.Str("kind", 32)
			if err == nil && !validKind(s) {
				return fmt.Errorf("kind %q is not a SARIF result kind", s)
			}
			res.kind = s
			return err
		case "level":
			s, _, _, err := d.w.Str("level", 16)
			if err == nil && !validLevel(s) {
				return fmt.Errorf("level %q is not error, warning, note or none", s)
			}
			res.level = s
			return err
		case "message":
			return d.message(res)
		case "locations":
			_, err := d.w.ArrayOrNull("locations", func(i int, el jsonscan.Token) error {
				if i > 0 {
					// Only the primary location is a row coordinate.
					return d.w.Skip(el)
				}
				res.hasLocation = true
				return d.location(res, el)
			})
			return err
		}
		return d.w.SkipValue()
	})
	return res, err
}

func (d *decoder) ruleRef(res *result) error {
	_, err := d.w.ObjectOrNull("rule", func(key []byte) error {
		switch string(key) {
		case "id":
			s, _, null, err := d.w.Str("rule.id", MessageBytes)
			res.ruleRefID, res.hasRuleRefID = s, !null
			return err
		case "index":
			return d.integer(&res.ruleRefIndex, "rule.index")
		case "toolComponent":
			return d.w.Object("rule.toolComponent", func(k []byte) error {
				switch string(k) {
				case "index":
					return d.integer(&res.tcIndex, "toolComponent.index")
				case "name":
					return d.text(&res.tcName, "toolComponent.name")
				}
				return d.w.SkipValue()
			})
		}
		return d.w.SkipValue()
	})
	return err
}

func (d *decoder) message(res *result) error {
	_, err := d.w.ObjectOrNull("message", func(key []byte) error {
		switch string(key) {
		case "text":
			s, cut, null, err := d.w.Str("message.text", MessageBytes)
			res.msgText, res.msgCut, res.hasMsgText = s, cut, !null
			return err
		case "id":
			return d.text(&res.msgID, "message.id")
		case "arguments":
			_, err := d.w.ArrayOrNull("message.arguments", func(i int, el jsonscan.Token) error {
				if el.Kind != jsonscan.String {
					return d.w.S.Errorf(el, "message.arguments[%d] must be a string", i)
				}
				if i < 16 {
					b := el.Bytes
					if len(b) > MessageBytes {
						b = b[:jsonscan.RuneCut(b, MessageBytes)]
					}
					res.msgArgs = append(res.msgArgs, string(b))
				}
				return nil
			})
			return err
		}
		return d.w.SkipValue()
	})
	return err
}

func (d *decoder) location(res *result, tok jsonscan.Token) error {
	return d.w.Members(tok, "a location", func(key []byte) error {
		if string(key) != "physicalLocation" {
			return d.w.SkipValue()
		}
		null, err := d.w.ObjectOrNull("physicalLocation", func(key []byte) error {
			switch string(key) {
			case "artifactLocation":
				return d.w.Object("artifactLocation", func(k []byte) error {
					switch string(k) {
					case "uri":
						s, cut, null, err := d.w.Str("uri", uriBytes)
						res.uri, res.hasURI, res.uriTooLong = s, !null, cut
						return err
					case "uriBaseId":
						return d.text(&res.baseID, "uriBaseId")
					case "index":
						return d.integer(&res.artIndex, "artifactLocation.index")
					}
					return d.w.SkipValue()
				})
			case "region":
				_, err := d.w.ObjectOrNull("region", func(k []byte) error {
					var dst *int64
					var what string
					switch string(k) {
					case "startLine":
						dst, what = &res.startLine, "region.startLine"
					case "startColumn":
						dst, what = &res.startCol, "region.startColumn"
					case "endLine":
						dst, what = &res.endLine, "region.endLine"
					case "endColumn":
						dst, what = &res.endCol, "region.endColumn"
					default:
						return d.w.SkipValue()
					}
					return d.integer(dst, what)
				})
				return err
			}
			return d.w.SkipValue()
		})
		res.hasPhysLocation = !null
		return err
	})
}

// ready reports whether everything a queued result refers to has been
// read: the document's version and, within its run, the tool, the
// artifacts it indexes and the base ids it names. Once a run has closed,
// what is still missing is missing for good.
func (d *decoder) ready(res *result) bool {
	if d.version == "" {
		return false
	}
	r := res.run
	if r.closed {
		return true
	}
	if !r.toolSeen {
		return false
	}
	base := res.baseID
	if res.artIndex >= 0 {
		// The index must resolve even when the result repeats the URI.
		if !r.artifactsSeen {
			return false
		}
		if !res.hasURI && res.artIndex < int64(len(r.artifacts)) {
			base = r.artifacts[res.artIndex].base
		}
	}
	return base == "" || r.basesSeen
}

// flush emits queued results, in native order, while the front one is
// ready.
func (d *decoder) flush() error {
	for len(d.queue) > 0 && d.ready(d.queue[0]) {
		res := d.queue[0]
		d.queue[0] = nil
		d.queue = d.queue[1:]
		d.pending -= res.size()
		if err := d.emit(res); err != nil {
			return err
		}
	}
	if len(d.queue) == 0 {
		d.queue = nil // release the backing array once drained
	}
	return nil
}

func (d *decoder) emit(res *result) error {
	r := res.run
	comp := &r.driver
	if res.tcIndex >= 0 {
		if res.tcIndex >= int64(len(r.extensions)) {
			return resultFailure(res, "rule.toolComponent.index %d does not resolve: the run has %d extensions", res.tcIndex, len(r.extensions))
		}
		comp = &r.extensions[res.tcIndex]
	} else if res.tcName != "" && res.tcName != r.driver.name {
		comp = nil
		for i := range r.extensions {
			if r.extensions[i].name == res.tcName {
				comp = &r.extensions[i]
				break
			}
		}
		if comp == nil {
			return resultFailure(res, "rule.toolComponent.name %q names no tool component of the run", res.tcName)
		}
	}
	idx := res.ruleIndex
	if res.ruleRefIndex >= 0 {
		if idx >= 0 && idx != res.ruleRefIndex {
			return resultFailure(res, "ruleIndex %d and rule.index %d disagree", idx, res.ruleRefIndex)
		}
		idx = res.ruleRefIndex
	}
	var ru *rule
	if idx >= 0 {
		if idx >= int64(len(comp.rules)) {
			return resultFailure(res, "rule index %d does not resolve: the tool component has %d rules", idx, len(comp.rules))
		}
		ru = &comp.rules[idx]
	} else if idx < -1 {
		return resultFailure(res, "rule index %d is negative", idx)
	}
	if ru != nil && ru.id != "" {
		// A hierarchical ruleId ("CA2101/1") names a sub-rule of its
		// descriptor; any other disagreement is a corrupt reference.
		for _, id := range []struct {
			set bool
			v   string
		}{{res.hasRuleID, res.ruleID}, {res.hasRuleRefID, res.ruleRefID}} {
			if id.set && id.v != ru.id && !strings.HasPrefix(id.v, ru.id+"/") {
				return resultFailure(res, "rule id %q disagrees with rules[%d].id %q", id.v, idx, ru.id)
			}
		}
	}
	var ruleID table.Null[string]
	switch {
	case res.hasRuleID:
		ruleID = table.Some(res.ruleID)
	case res.hasRuleRefID:
		ruleID = table.Some(res.ruleRefID)
	case ru != nil && ru.id != "":
		ruleID = table.Some(ru.id)
	}
	if ru == nil && ruleID.Valid {
		for i := range comp.rules {
			if comp.rules[i].id == ruleID.V {
				ru = &comp.rules[i]
				break
			}
		}
	}

	kind := res.kind
	if kind == "" {
		kind = "fail"
	}
	level, source := res.level, "result"
	switch {
	case level != "":
	case kind != "fail":
		level, source = "none", "kind"
	case ru != nil && ru.level != "":
		level, source = ru.level, "rule_default"
	default:
		level, source = "warning", "sarif_default"
	}

	var msg table.Null[string] // null when the result has no message
	cut := res.msgCut
	switch {
	case res.hasMsgText:
		msg = table.Some(res.msgText)
	case res.msgID != "" && ru != nil:
		if tmpl, ok := ru.messages[res.msgID]; ok {
			s := substitute(tmpl, res.msgArgs)
			if len(s) > MessageBytes {
				s, cut = s[:jsonscan.RuneCut([]byte(s), MessageBytes)], true
			}
			msg = table.Some(s)
		}
	}

	uri, base := res.uri, res.baseID
	hasURI := res.hasURI
	if res.artIndex >= 0 {
		if res.artIndex >= int64(len(r.artifacts)) {
			return resultFailure(res, "artifactLocation.index %d does not resolve: the run has %d artifacts", res.artIndex, len(r.artifacts))
		}
		if !hasURI {
			a := r.artifacts[res.artIndex]
			uri, base, hasURI = a.uri, a.base, a.hasURI
		}
	} else if res.artIndex < -1 {
		return resultFailure(res, "artifactLocation.index %d is negative", res.artIndex)
	}
	var path table.Null[string]
	status := StatusAbsent
	if hasURI {
		if res.uriTooLong {
			status = StatusInvalidURI
		} else {
			path.V, status = d.root.locate(resolve(uri, base, r.bases))
			path.Valid = status == StatusOK
		}
	}
	d.levels[level]++
	d.status[status]++
	d.emitted++
	return d.tw.Row(&table.SARIFResult{
		RunIndex:         int64(r.index),
		ResultIndex:      int64(res.index),
		Tool:             table.NonEmpty(r.driver.name),
		RuleID:           ruleID,
		RuleIndex:        idx,
		Level:            level,
		LevelSource:      source,
		Kind:             kind,
		Message:          msg,
		MessageTruncated: cut,
		URI:              table.Null[string]{V: uri, Valid: hasURI && !res.uriTooLong},
		URIBaseID:        table.NonEmpty(base),
		Path:             path,
		LocationStatus:   status,
		StartLine:        res.startLine,
		StartColumn:      res.startCol,
		EndLine:          res.endLine,
		EndColumn:        res.endCol,
	})
}

func resultFailure(res *result, format string, args ...any) error {
	f := evidence.Failf(evidence.CodeDecodeFailure, "runs[%d].results[%d]: %s", res.run.index, res.index, fmt.Sprintf(format, args...))
	f.Location.Offset = res.regionOffset
	return f
}

// substitute fills SARIF message placeholders {0}..{n}; "{{" and "}}" are
// literal braces.
func substitute(tmpl string, args []string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		if c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}' {
			b.WriteByte('}')
			i++
			continue
		}
		if c == '{' {
			if j := strings.IndexByte(tmpl[i:], '}'); j > 1 {
				if n, err := strconv.Atoi(tmpl[i+1 : i+j]); err == nil && n >= 0 && n < len(args) {
					b.WriteString(args[n])
					i += j
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (d *decoder) summary() *evidence.Summary {
	s := &evidence.Summary{RowsObserved: d.emitted, Complete: !d.incomp}
	s.Coverage = evidence.Object{"runs": d.runs, "results_read": d.read}
	s.Metrics = map[string]evidence.Metric{
		"results": {Value: d.emitted, Unit: "results"},
		"runs":    {Value: d.runs, Unit: "runs"},
	}
	for _, lv := range []string{"error", "warning", "note", "none"} {
		s.Metrics["level_"+lv] = evidence.Metric{Value: d.levels[lv], Unit: "results"}
	}
	var rejected int64
	// In status order, so the summary is the same on every run.
	for _, st := range slices.Sorted(maps.Keys(d.status)) {
		if n := d.status[st]; st != StatusOK && st != StatusAbsent {
			rejected += n
			s.Limit(fmt.Sprintf("%d result locations rejected as %s: those rows keep their native uri but have no path", n, st))
		}
	}
	s.Metrics["rejected_locations"] = evidence.Metric{Value: rejected, Unit: "results"}
	for _, n := range d.notes {
		s.Limit(n)
	}
	return s
}

// abort closes a begun table as incomplete and returns the failure.
func (d *decoder) abort(err error) error {
	d.incomp = true
	s := d.summary()
	s.Truncation = &evidence.Truncation{Reason: "document_incomplete", Omitted: int64(len(d.queue))}
	s.Limit(fmt.Sprintf("decoding stopped at byte %d (%v): results after that point, and %d read but unresolved, are not in this table", d.w.S.Offset(), err, len(d.queue)))
	return d.tw.Abort(err, s)
}
