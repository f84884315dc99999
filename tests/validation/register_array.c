// expect: #pragma omp parallel for private(tmp)
#include <stdio.h>
int main(void) {
  int a[256], b[256];
  int tmp[2];
  for (int i = 0; i < 256; i++) a[i] = (i * 5) % 17;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 256; i++) {
    tmp[0] = a[i];
    tmp[1] = a[i] * 3;
    b[i] = tmp[0] + tmp[1];
  }
  long s = 0;
  for (int i = 0; i < 256; i++) s += b[i];
  printf("%ld\n", s);
  return 0;
}
