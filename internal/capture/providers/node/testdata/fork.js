// The parent forks one child with child_process.fork, which passes Node's
// own flags (execArgv) on, so both processes are profiled.
const { fork } = require('child_process');

if (process.argv[2] === 'child') {
  let x = 0;
  for (let i = 0; i < 5e6; i++) x += i % 7;
} else {
  fork(__filename, ['child']).on('exit', (code) => console.log('child exited', code));
}
