// Two worker threads and the main thread each burn CPU, so Node writes
// three CPU profiles (thread ids 0, 1 and 2).
const { Worker, isMainThread, threadId } = require('worker_threads');

function burn(ms) {
  const end = Date.now() + ms;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + threadId);
  return x;
}

if (isMainThread) {
  const workers = [new Worker(__filename), new Worker(__filename)];
  burn(50);
  let left = workers.length;
  for (const w of workers) {
    w.on('exit', () => { if (--left === 0) console.log('workers done'); });
  }
} else {
  burn(100);
}
