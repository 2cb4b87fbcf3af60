"""Writes internal/formats/perfetto/names.go: field names by number, from perfetto_trace_pb2.

Run: .venv/bin/python testdata/perfetto/gennames.py > internal/formats/perfetto/names.go && gofmt -w internal/formats/perfetto/names.go
"""
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p

print("// Code generated from the perfetto PyPI package's perfetto_trace_pb2 (v0.59.1) by testdata/perfetto/gennames.py; DO NOT EDIT.\n")
print("package perfetto\n")
for var, m, doc in [("packetFields", p.TracePacket, "TracePacket"), ("trackEventFields", p.TrackEvent, "TrackEvent"), ("internedFields", p.InternedData, "InternedData")]:
    print(f"// {var} names the fields of {doc} by number, for the counts of what is not interpreted.")
    print(f"var {var} = map[int32]string{{")
    for f in sorted(m.DESCRIPTOR.fields, key=lambda f: f.number):
        print(f'\t{f.number}: "{f.name}",')
    print("}\n")
