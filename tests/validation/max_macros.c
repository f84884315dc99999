// expect: #pragma omp parallel for reduction(max:hi) reduction(min:lo)
// Maximum and minimum macros of two parameters are reductions.
#include <stdio.h>
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(x, y) (((x) < (y)) ? (x) : (y))
int main(void) {
  long a[6000];
  long hi = -1, lo = 1L << 40;
  for (int i = 0; i < 6000; i++) a[i] = (i * 7919L) % 60013;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 6000; i++) {
    hi = MAX(hi, a[i] * 3);
    lo = MIN(a[i] - 7, lo);
  }
  printf("%ld %ld\n", hi, lo);
  return 0;
}
