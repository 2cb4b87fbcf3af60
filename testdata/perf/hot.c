/* hot.c: a workload with known CPU hotspots for perf fixtures.
 *
 * The parent (comm "flameox-hot") spends most of its time in hot_spin,
 * partly through a recursive chain so one stack holds a frame several
 * times; a forked child renamed "hot-child" runs warm_spin, so the profile
 * has two processes that must not be blended.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) uint64_t hot_spin(uint64_t n) {
	uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + i;
	return x;
}

__attribute__((noinline)) uint64_t warm_spin(uint64_t n) {
	uint64_t x = 7;
	for (uint64_t i = 0; i < n; i++)
		x ^= (x << 7) + i;
	return x;
}

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t n) {
	if (depth == 0)
		return hot_spin(n);
	return recurse(depth - 1, n) + 1;
}

int main(int argc, char **argv) {
	uint64_t rounds = argc > 1 ? strtoull(argv[1], 0, 10) : 100;
	uint64_t acc = 0;
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "hot-child");
		for (uint64_t r = 0; r < rounds; r++)
			acc += warm_spin(1500000 + r);
		printf("child %llu\n", (unsigned long long)acc);
		return 0;
	}
	for (uint64_t r = 0; r < rounds; r++) {
		acc += hot_spin(3000000 + r);
		acc += recurse(3, 1000000 + r);
		acc += warm_spin(500000 + r);
	}
	waitpid(child, 0, 0);
	printf("parent %llu\n", (unsigned long long)acc);
	return 0;
}
