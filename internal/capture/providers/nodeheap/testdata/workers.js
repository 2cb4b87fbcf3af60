// The main thread and two worker threads allocate and keep objects; each
// thread writes its own heap profile at exit.
const { Worker, isMainThread } = require('worker_threads');
const kept = [];
function grow(n) { for (let i = 0; i < n; i++) kept.push({ i, s: 'y'.repeat(128) + i }); }
grow(50000);
if (isMainThread) {
  let done = 0;
  for (let w = 0; w < 2; w++) {
    new Worker(__filename).on('exit', () => { if (++done === 2) console.log('done', kept.length); });
  }
}
