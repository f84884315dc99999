// expect: #pragma omp parallel for num_threads(3) schedule(static, 1)
// expect: #pragma omp parallel for num_threads(3) schedule(static)
// expect: #pragma omp parallel for num_threads(3) schedule(static, 8)
#include <stdio.h>
int main(void) {
  int a[500], b[500], c[500];
  __builtin_csa_spmdization(3, "cyclic");
  for (int i = 0; i < 500; i++)
    a[i] = i * 2;
  __builtin_csa_spmdization(3, "block");
  for (int i = 0; i < 500; i++)
    b[i] = a[i] + 1;
  __builtin_csa_spmdization(3, "hybrid");
  for (int i = 0; i < 500; i++)
    c[i] = b[i] * a[i];
  long s = 0;
  for (int i = 0; i < 500; i++) s += c[i];
  printf("%ld\n", s);
  return 0;
}
