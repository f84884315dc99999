// expect: #pragma omp parallel sections
// expect: #pragma omp section
#include <stdio.h>
static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) {
  long x = 0, y = 0;
  int a[64];
  int reg = __builtin_csa_parallel_region_entry(0);
  int sec0 = __builtin_csa_parallel_section_entry(reg);
  /* first half */
  x = fib(24);
  for (int i = 0; i < 32; i++) a[i] = i * 2;
  __builtin_csa_parallel_section_exit(sec0);
  int sec1 = __builtin_csa_parallel_section_entry(reg);
  y = fib(22);
  for (int i = 32; i < 64; i++) a[i] = i * 3;
  __builtin_csa_parallel_section_exit(sec1);
  __builtin_csa_parallel_region_exit(reg);
  long s = 0;
  for (int i = 0; i < 64; i++) s += a[i];
  printf("%ld %ld %ld\n", x, y, s);
  return 0;
}
