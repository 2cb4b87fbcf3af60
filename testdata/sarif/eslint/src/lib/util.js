export function same(a, b) {
  let result = a != b;
  return result;
}
