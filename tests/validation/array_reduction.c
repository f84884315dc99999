// expect: #pragma omp parallel for reduction(+:hist[:16])
// expect: #pragma omp parallel for private(j, row)
// Element updates of a local array at an indirect subscript are an array
// reduction (a C array section); a scratch row each iteration fills before
// reading it is private.
#include <stdio.h>
int main(void) {
  int idx[1000], hist[16], out[200];
  int row[8];
  int j;
  for (int i = 0; i < 1000; i++) idx[i] = (i * 7 + 3) % 16;
  for (int k = 0; k < 16; k++) hist[k] = 0;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 1000; i++)
    hist[idx[i]] += i % 5;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 200; i++) {
    for (j = 0; j < 8; j++)
      row[j] = (i + j) % 9;
    out[i] = row[0] * row[7] + row[3];
  }
  long s = 0;
  for (int k = 0; k < 16; k++) s += hist[k] * (k + 1);
  for (int i = 0; i < 200; i++) s += out[i];
  printf("%ld\n", s);
  return 0;
}
