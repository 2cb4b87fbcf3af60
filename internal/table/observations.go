package table

// ObservationRecord is a row of observations.records: one record line of
// an observations file, in file order.
type ObservationRecord struct {
	Line  int64        `col:"line,base=1" doc:"1-based line of the record in its file"`
	Kind  string       `col:"kind" doc:"observation, phase_start or phase_end"`
	Name  Null[string] `col:"name" doc:"observation name; null for phase records"`
	Phase Null[string] `col:"phase" doc:"phase of the observation, or the phase a phase record opens or closes; null when none"`
	Unit  Null[string] `col:"unit" doc:"unit the workload declared for the value; null when none"`
	Value any          `col:"value" doc:"the recorded value, exactly as written; null for phase records"`
	TS    int64        `col:"ts,unit=ns" doc:"record time, nanoseconds since the Unix epoch"`
	PID   int64        `col:"pid" doc:"process that wrote the record"`
}

// ObservationRecords is the observations.records schema.
var ObservationRecords = Define[ObservationRecord]("observations.records", "one row per record of a workload's observations file", FromArtifact)
