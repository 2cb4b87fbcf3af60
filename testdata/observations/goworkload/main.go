// Command goworkload records observations with pkg/observe, for the
// observations fixtures (see ../regen.sh).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/flameox/flameox/pkg/observe"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	rec, err := observe.FromEnv()
	if err != nil {
		return err
	}
	defer rec.Close()
	end, err := rec.Phase("load")
	if err != nil {
		return err
	}
	for i, ms := range []float64{12.5, 9.75, 11} {
		if err := rec.Observe("batch_latency", ms, observe.Unit("ms"), observe.InPhase("load")); err != nil {
			return err
		}
		if err := rec.Observe("rows", 1000+i*250, observe.InPhase("load")); err != nil {
			return err
		}
	}
	if err := end(); err != nil {
		return err
	}
	config := map[string]any{
		"model":   "résumé-ranker",
		"layers":  []int{64, 32, 8},
		"dropout": 0.1,
		"flags":   map[string]bool{"fp16": true},
		"seed":    json.Number("18446744073709551615"),
	}
	if err := rec.Observe("config", config); err != nil {
		return err
	}
	if err := rec.Observe("batch_latency", 0.0105, observe.Unit("s")); err != nil {
		return err
	}
	return rec.Observe("status", "done")
}
