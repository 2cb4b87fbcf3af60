// A workload with two hot functions. `node work.js F` makes parse F times
// slower and leaves render as it is: the baseline is F=1, the slow run F=3.
'use strict';
const factor = Number(process.argv[2] || 1);

function parse(n) {
  let h = 0;
  for (let i = 0; i < n * factor; i++) {
    h = (h * 31 + (i % 97)) | 0;
  }
  return h;
}

function render(n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    s += Math.sqrt(i % 1000);
  }
  return s;
}

let out = 0;
for (let round = 0; round < 40; round++) {
  out += parse(5e6);
  out += render(5e6);
}
console.log(out);
