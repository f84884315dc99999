// expect: #pragma omp parallel for private(t) reduction(+:s)
#include <stdio.h>
int main(void) {
  long a[1000];
  long s = 0, t;
  for (int i = 0; i < 1000; i++) a[i] = (i * 7919) % 1009;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 1000; i++) {
    t = a[i] * 3 + 1;
    s += t;
  }
  printf("%ld\n", s);
  return 0;
}
