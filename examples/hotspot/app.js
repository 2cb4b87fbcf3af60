// A small Node workload with one known hot function, used by `make demo`
// and by the tests: nearly all CPU time is spent in crunchPrimes.
'use strict';

function crunchPrimes(limit) {
  let count = 0;
  for (let n = 2; n < limit; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) {
      if (n % d === 0) { prime = false; break; }
    }
    if (prime) count++;
  }
  return count;
}

function formatReport(count) {
  return `primes: ${count}`;
}

const rounds = Number(process.argv[2] || 12);
let total = 0;
for (let i = 0; i < rounds; i++) total += crunchPrimes(200000);
console.log(formatReport(total));
