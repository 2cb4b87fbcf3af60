// Recursion and a worker thread: fib calls itself, so its inclusive count
// repeats per call-tree occurrence; the worker writes its own profile.
'use strict';
const { Worker, isMainThread } = require('worker_threads');

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

function spin(ms) {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1);
  return x;
}

if (isMainThread) {
  const w = new Worker(__filename);
  w.on('exit', () => {});
  console.log(fib(27));
} else {
  spin(150);
}
