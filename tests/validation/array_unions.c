// expect: #pragma omp parallel for private(w)
// expect: #pragma omp parallel for private(j, z)
// expect-ivdep-refused: w
// A local array that several writes fill together before each iteration
// reads it: two elements, and two halves written by two inner loops.
#include <stdio.h>
int main(void) {
  double a[400], out[400], w[2], z[8];
  int j;
  for (int i = 0; i < 400; i++) a[i] = (i * 37) % 101;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 400; i++) {
    w[0] = a[i] * 2;
    w[1] = a[i] + 3;
    double s = 0;
    for (int k = 0; k < 2; k++) s += w[k] * (k + 1);
    out[i] = s;
  }
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 400; i++) {
    for (j = 0; j < 4; j++) z[j] = a[i] * j;
    for (j = 4; j < 8; j++) z[j] = a[i] - j;
    for (j = 0; j < 8; j++) out[i] += z[j];
  }
  double t = 0;
  for (int i = 0; i < 400; i++) t += out[i];
  printf("%.3f\n", t);
  return 0;
}
