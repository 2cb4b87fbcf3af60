// Reference for the decoder's weights, computed from the samples alone
// (not the call tree's totals): for each call frame, self = samples whose
// leaf it is, cum = samples whose stack holds it at least once (pprof's
// cum), occurrences = the frame's appearances summed over every sample's
// stack. Usage: node cum.js PROFILE > PROFILE.cum.json
'use strict';
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const byId = new Map(), parent = new Map();
for (const n of p.nodes) {
  byId.set(n.id, n);
  for (const c of n.children || []) parent.set(c, n.id);
}
const key = (cf) => [cf.functionName, cf.scriptId, cf.url, cf.lineNumber, cf.columnNumber].join('\u0000');
const out = new Map();
const entry = (cf) => {
  const k = key(cf);
  if (!out.has(k)) out.set(k, { function: cf.functionName, url: cf.url, line: cf.lineNumber, column: cf.columnNumber, self: 0, cum: 0, occurrences: 0 });
  return out.get(k);
};
for (const id of p.samples) {
  entry(byId.get(id).callFrame).self++;
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) {
    const cf = byId.get(x).callFrame;
    const e = entry(cf);
    e.occurrences++;
    if (!seen.has(key(cf))) { seen.add(key(cf)); e.cum++; }
  }
}
const rows = [...out.values()].sort((a, b) => b.cum - a.cum || a.function.localeCompare(b.function) || a.line - b.line || a.column - b.column);
process.stdout.write(JSON.stringify({ samples: p.samples.length, frames: rows }, null, 1) + '\n');
