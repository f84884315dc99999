// expect: #pragma omp parallel for num_threads(4) schedule(static) reduction(+:s0)
// expect: #pragma omp parallel for num_threads(4) schedule(static, 1) reduction(+:s1)
// expect: #pragma omp parallel for num_threads(4) schedule(static, 8) private(t) reduction(+:s8)
#include <stdio.h>
int main(void) {
  int a[777];
  long s0 = 0, s1 = 0, s8 = 0;
  int t;
  for (int i = 0; i < 777; i++) a[i] = i % 13;
  __builtin_csa_spmd(4, 0);
  for (int i = 0; i < 777; i++)
    s0 += a[i];
  __builtin_csa_spmd(4, 1);
  for (int i = 0; i < 777; i++)
    s1 = s1 + a[i] * i;
  __builtin_csa_spmd(4, 8);
  for (int i = 0; i < 777; i++) {
    t = a[i] - 6;
    s8 += t * t;
  }
  printf("%ld %ld %ld\n", s0, s1, s8);
  return 0;
}
