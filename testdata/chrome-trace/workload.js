// The workload of node-20-trace-events.json: timers, file I/O, a
// performance measure and some CPU work, so node writes X, B/E, b/e
// (async hooks), I (instants) and M (thread and process names) events.
const { performance } = require('perf_hooks');
const fs = require('fs');
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
performance.mark('a'); fib(25); performance.mark('b'); performance.measure('fib', 'a', 'b');
fs.readFile(__filename, () => { setTimeout(() => { fib(20); }, 5); });
