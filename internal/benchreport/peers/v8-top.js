// The peer of flameox-rank on a .cpuprofile: what a Node user would
// write: parse the profile whole and sum each function's self samples.
'use strict';
const fs = require('fs');
const p = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const byId = new Map();
for (const n of p.nodes) byId.set(n.id, n.callFrame);
const self = new Map();
for (const id of p.samples) {
  const f = byId.get(id);
  const k = f.functionName + ' ' + f.url + ':' + f.lineNumber;
  self.set(k, (self.get(k) || 0) + 1);
}
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 20);
for (const [k, v] of top) console.log(v, k);
