// tmpl.cc: C++ frames whose demangled names hold spaces, parentheses,
// templates and an anonymous namespace, for the perf fixtures.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace flameox {
namespace {
template <typename T, int N> struct Mixer {
	__attribute__((noinline)) T operator()(const std::vector<T> &v, T seed) const {
		T x = seed;
		for (int r = 0; r < N; r++)
			for (T e : v)
				x = x * 31 + (e ^ (x >> 3));
		return x;
	}
};
} // namespace

template <typename T> __attribute__((noinline)) T run(const std::vector<T> &v, T (*f)(T), T seed) {
	Mixer<T, 64> m;
	return f(m(v, seed));
}
} // namespace flameox

__attribute__((noinline)) static uint64_t finish(uint64_t x) { return x ^ (x >> 17); }

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	std::vector<uint64_t> v(20000);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = i * 2654435761u;
	uint64_t acc = 0;
	for (int r = 0; r < rounds; r++)
		acc += flameox::run<uint64_t>(v, finish, r);
	std::printf("%llu\n", (unsigned long long)acc);
	return 0;
}
