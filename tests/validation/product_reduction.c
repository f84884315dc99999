// expect: #pragma omp parallel for reduction(*:p) reduction(&&:all)
#include <stdio.h>
int main(void) {
  int f[62];
  unsigned long long p = 1;
  int all = 1;
  for (int i = 0; i < 62; i++) f[i] = (i % 3 == 0) ? 2 : 1;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 62; i++) {
    p = p * f[i];
    all = all && f[i] > 0;
  }
  printf("%llu %d\n", p, all);
  return 0;
}
