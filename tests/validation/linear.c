// expect: #pragma omp parallel for linear(j)
// expect: #pragma omp parallel for lastprivate(t)
// An induction variable stepped once per iteration becomes linear; a
// variable declared in an inner block is that block's, not the outer one.
#include <stdio.h>
int main(void) {
  int a[300], c[600], out[300];
  int j = 5, t = 0;
  for (int i = 0; i < 300; i++) a[i] = (i * 11) % 23;
  for (int i = 0; i < 600; i++) c[i] = 0;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 300; i++) {
    c[j] += a[i] * 2;
    j++;
  }
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 300; i++) {
    { int t = a[i] + 1; out[i] = t * 3; }
    t = i;
  }
  long s = j + t;
  for (int i = 0; i < 600; i++) s += (long)c[i] * (i % 7);
  for (int i = 0; i < 300; i++) s += out[i];
  printf("%ld\n", s);
  return 0;
}
