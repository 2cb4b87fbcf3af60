// Deliberately flawed: each rule in eslint.config.js fires here at least once.
var counter = 0;
let unused = 1;

export function check(input) {
  if (input == "1") {
    counter++;
  }
  return eval(input);
}
