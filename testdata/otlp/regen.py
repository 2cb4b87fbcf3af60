"""Capture what the OpenTelemetry Python SDK's OTLP/HTTP exporter sends.

A loopback HTTP receiver takes the exporter's POST /v1/traces bodies and
writes them as they arrived (python-sdk.pb, protobuf). reference.json
counts spans and sums durations per name with the opentelemetry-proto
classes, for the decoder's equality test.
"""
import http.server, json, sys, threading, time, os

bodies = []

class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers["Content-Length"])
        bodies.append((self.path, self.headers.get("Content-Type"), self.headers.get("Content-Encoding"), self.rfile.read(n)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass

srv = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, Link

exp = OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces")
from opentelemetry.sdk.trace.export import BatchSpanProcessor
tp = TracerProvider(resource=Resource.create({"service.name": "checkout", "service.version": "1.2.3", "host.cores": 16}))
tp.add_span_processor(BatchSpanProcessor(exp, max_export_batch_size=512, schedule_delay_millis=60000))
web = tp.get_tracer("web.handler", "0.9.1")
db = tp.get_tracer("db.client", "2.0", schema_url="https://opentelemetry.io/schemas/1.21.0")

def work(ms):
    t = time.perf_counter()
    while time.perf_counter() - t < ms / 1000:
        pass

first = None
for i in range(6):
    with web.start_as_current_span("GET /cart", kind=SpanKind.SERVER, attributes={
            "http.method": "GET", "http.status_code": 200, "big.int": 2**62 + i, "ratio": 0.25 * i,
            "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "ok": i % 2 == 0,
            "tags": ["a", "b"], "codes": [1, 2, 3], "long": "x" * 300}) as s:
        if first is None:
            first = s.get_span_context()
        s.add_event("cache.miss", {"key": f"cart:{i}", "size": i})
        for j in range(2):
            with db.start_as_current_span("SELECT carts", kind=SpanKind.CLIENT, attributes={"db.system": "postgresql", "row": j}):
                work(1)
        with web.start_as_current_span("render", links=[Link(first, {"why": "first request"})]) as r:
            work(2)
            if i == 3:
                r.set_status(Status(StatusCode.ERROR, "template missing"))
                r.record_exception(ValueError("template missing"))
    with db.start_as_current_span("publish", kind=SpanKind.PRODUCER):
        work(0.5)
with web.start_as_current_span("consume", kind=SpanKind.CONSUMER) as s:
    s.set_status(Status(StatusCode.OK))
tp.force_flush()
tp.shutdown()
srv.shutdown()

assert len(bodies) == 1, [(p, len(b)) for p, *_ , b in bodies]
path, ctype, enc, body = bodies[0]
assert path == "/v1/traces" and ctype == "application/x-protobuf" and enc is None, (path, ctype, enc)
open("python-sdk.pb", "wb").write(body)

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

def reference(req):
    per = {}
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for sp in ss.spans:
                c = per.setdefault(sp.name, {"count": 0, "total_ns": 0})
                c["count"] += 1
                c["total_ns"] += sp.end_time_unix_nano - sp.start_time_unix_nano
    return per

req = ExportTraceServiceRequest.FromString(body)
assert TracesData.FromString(body) == TracesData(resource_spans=req.resource_spans)
ref = {"python-sdk.pb": reference(req)}
import opentelemetry.proto, opentelemetry.sdk.version
ref["_reader"] = "opentelemetry-proto %s ExportTraceServiceRequest.FromString" % opentelemetry.sdk.version.__version__
json.dump(ref, open("reference.json", "w"), indent=1, sort_keys=True)
print("python-sdk.pb", len(body), "bytes;", sum(v["count"] for v in ref["python-sdk.pb"].values()), "spans")
