// Captures what the OpenTelemetry JS SDK's OTLP/HTTP JSON exporter posts
// to a loopback receiver (js-sdk.json, the body as sent).
import http from 'node:http';
import fs from 'node:fs';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

const bodies = [];
const srv = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    bodies.push({ path: req.url, type: req.headers['content-type'], enc: req.headers['content-encoding'], body: Buffer.concat(chunks) });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
await new Promise((r) => srv.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${srv.address().port}/v1/traces`;
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'frontend', 'process.pid': 4242, 'deployment': 'loopback' }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { maxExportBatchSize: 512, scheduledDelayMillis: 60000 })],
});
const t = provider.getTracer('ui.router', '3.1.0');
const busy = (ms) => { const s = performance.now(); while (performance.now() - s < ms); };
for (let i = 0; i < 5; i++) {
  const root = t.startSpan('navigate', { kind: SpanKind.SERVER, attributes: { route: '/home', attempt: i, big: 9007199254740993, share: 0.5, nan: NaN, inf: -Infinity, flags: [true, false], names: ['x', 'y'] } });
  const ctx = trace.setSpan(context.active(), root);
  for (let j = 0; j < 3; j++) {
    const c = t.startSpan('fetch', { kind: SpanKind.CLIENT, attributes: { 'http.url': `http://api/${j}` }, links: [{ context: root.spanContext(), attributes: { n: j } }] }, ctx);
    busy(1);
    c.addEvent('response', { bytes: 100 * j });
    if (j === 2 && i === 1) c.setStatus({ code: SpanStatusCode.ERROR, message: 'timeout' });
    c.end();
  }
  busy(1);
  root.end();
}
await provider.forceFlush();
await provider.shutdown();
srv.close();
if (bodies.length !== 1) throw new Error(`expected one request, got ${bodies.length}`);
const b = bodies[0];
if (b.path !== '/v1/traces' || b.type !== 'application/json' || b.enc) throw new Error(JSON.stringify([b.path, b.type, b.enc]));
fs.writeFileSync('js-sdk.json', b.body);
console.log('js-sdk.json', b.body.length, 'bytes');
