package schema

import "github.com/flameox/flameox/internal/evidence"

// ObservationRecords is the table the observations decoder emits: one row
// per record line, in file order.
const ObservationRecords = "observations.records"

// ObservationColumns are the columns of observations.records.
func ObservationColumns() []evidence.Column {
	return []evidence.Column{
		{Name: "artifact_id", Type: evidence.TypeString, Description: "observations file the record was read from"},
		{Name: "line", Type: evidence.TypeInt, Description: "1-based line of the record in its file"},
		{Name: "kind", Type: evidence.TypeString, Description: "observation, phase_start or phase_end"},
		{Name: "name", Type: evidence.TypeString, Description: "observation name; null for phase records"},
		{Name: "phase", Type: evidence.TypeString, Description: "phase of the observation, or the phase a phase record opens or closes; null when none"},
		{Name: "unit", Type: evidence.TypeString, Description: "unit the workload declared for the value; null when none"},
		{Name: "value", Type: evidence.TypeJSON, Description: "the recorded value, exactly as written; null for phase records"},
		{Name: "ts", Type: evidence.TypeInt, Unit: "ns", Description: "record time, nanoseconds since the Unix epoch"},
		{Name: "pid", Type: evidence.TypeInt, Description: "process that wrote the record"},
	}
}
