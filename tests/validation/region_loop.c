// expect: #pragma omp parallel for private(t)
#include <stdio.h>
int main(void) {
  int a[1000], b[1000];
  int t;
  for (int i = 0; i < 1000; i++) b[i] = (i * 31) % 97;
  int reg = __builtin_csa_parallel_region_entry(1);
  for (int i = 0; i < 1000; i++) {
    int sec = __builtin_csa_parallel_section_entry(reg);
    t = b[i] * b[i];
    a[i] = t % 101;
    __builtin_csa_parallel_section_exit(sec);
  }
  __builtin_csa_parallel_region_exit(reg);
  long s = 0;
  for (int i = 0; i < 1000; i++) s += a[i] * (i % 7);
  printf("%ld\n", s);
  return 0;
}
