// Burns a little CPU, then dies of an uncaught exception (exit status 1).
let x = 0;
for (let i = 0; i < 1e6; i++) x += i;
throw new Error('workload failed on purpose');
