/* Two functions whose time falls on known lines: mix spends most of its
 * samples in the multiply loop, sum in its add loop; main calls both. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long mix(unsigned long n) {
	unsigned long h = 1469598103934665603UL;
	for (unsigned long i = 0; i < n; i++) {
		h ^= i;
		h *= 1099511628211UL;
	}
	return h;
}

__attribute__((noinline)) static unsigned long sum(unsigned long n) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i * i;
	return s;
}

int main(int argc, char **argv) {
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 200000000UL;
	for (int r = 0; r < 3; r++) {
		sink += mix(n);
		sink += sum(n / 2);
	}
	printf("%lu\n", sink);
	return 0;
}
