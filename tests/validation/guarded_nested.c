// expect: #pragma omp parallel for private(acc, j) reduction(|:any) reduction(^:x)
#include <stdio.h>
int main(void) {
  int m[40][50];
  int j, acc, x = 0, any = 0;
  for (int i = 0; i < 40; i++)
    for (int k = 0; k < 50; k++) m[i][k] = (i * 31 + k * 17) % 23;
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < 40; i++) {
    /* row checksum */
    acc = 0;
    for (j = 0; j < 50; j++)
      acc += m[i][j];
    x ^= acc;
    any |= acc > 500;
  }
  printf("%d %d\n", x, any);
  return 0;
}
