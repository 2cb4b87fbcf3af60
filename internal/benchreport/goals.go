package main

import (
	"fmt"
	"os"
	"text/tabwriter"
)

// goal is an issue's throughput floor for a case: MB/s on the median
// wall, or, where the issue says "per core", MB per CPU second (user+
// system), which a second core cannot lift.
type goal struct {
	mbps   float64
	perCPU bool
	issue  string
	// counted is the bytes the floor is stated in, when it is not the
	// file's size (Memray: the decompressed records, not the zero
	// padding memray grows a file by).
	counted func(path string) (int64, error)
	what    string // what counted measures, for the report
}

// goals are the floors the open issues set, printed in their own table
// so that a run says plainly whether each is met.
var goals = map[string]goal{
	"memray decode 500 MB":       {mbps: 200, issue: "12 Memray reader", counted: recordBytes, what: "records"},
	"aiperf records decode 1 GB": {mbps: 300, issue: "13 AIPerf records"},
	"kineto decode 1 GB":         {mbps: 300, perCPU: true, issue: "10 Chrome JSON (Kineto)"},
	"perfetto decode 1 GB":       {mbps: 300, perCPU: true, issue: "10 Perfetto proto"},
}

type goalRow struct {
	name string
	g    goal
	mb   float64 // counted MB
	now  summary
	err  error
}

// goalRowFor measures a case against its goal, if it has one.
func goalRowFor(name, path string, fileMB float64, now summary) (goalRow, bool) {
	g, ok := goals[name]
	if !ok {
		return goalRow{}, false
	}
	r := goalRow{name: name, g: g, mb: fileMB, now: now}
	if g.counted != nil {
		n, err := g.counted(path)
		r.mb, r.err = float64(n)/1e6, err
	}
	return r, true
}

func printGoals(rows []goalRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Println("\nissue throughput floors (on the median run):")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tissue\tcounted MB\tmeasured\tfloor\tverdict\t")
	for _, r := range rows {
		what := "file"
		if r.g.what != "" {
			what = r.g.what
		}
		if r.err != nil {
			fmt.Fprintf(tw, "%s\t%s\tfailed: %s\t\t\t\t\n", r.name, r.g.issue, oneLine(r.err))
			continue
		}
		unit, secs := "MB/s", r.now.wall
		if r.g.perCPU {
			unit, secs = "MB/CPU-s", r.now.cpu
		}
		got := r.mb / secs
		verdict := "met"
		if got < r.g.mbps {
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f (%s)\t%.0f %s\t≥%.0f %s\t%s\t\n", r.name, r.g.issue, r.mb, what, got, unit, r.g.mbps, unit, verdict)
	}
	tw.Flush()
}
