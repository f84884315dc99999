// expect: #pragma omp parallel for lastprivate(last)
#include <stdio.h>
int main(void) {
  int a[300], b[300];
  int last = -1;
  for (int i = 0; i < 300; i++) a[i] = i * i % 97;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 300; i++) {
    last = a[i] + i;
    b[i] = last * 2;
  }
  long s = 0;
  for (int i = 0; i < 300; i++) s += b[i];
  printf("%d %ld\n", last, s);
  return 0;
}
