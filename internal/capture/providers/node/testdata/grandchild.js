// Starts a sleeping grandchild (sh -c 'sleep'), publishes both pids to
// the file named in argv[2], then waits forever: only an owner that ends
// the whole process group leaves no orphan behind.
const { spawn } = require('child_process');
const fs = require('fs');

const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
fs.writeFileSync(process.argv[2] + '.tmp', `${process.pid}\n${child.pid}\n`);
fs.renameSync(process.argv[2] + '.tmp', process.argv[2]);
setInterval(() => {}, 1000);
