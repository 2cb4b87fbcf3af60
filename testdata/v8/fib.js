// Deep recursion for the inclusive-weight fixture: fib calls itself, so one
// sample's stack holds fib many times over.
'use strict';
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 8; i++) s += fib(30);
console.log(s);
