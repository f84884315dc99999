// expect: #pragma omp parallel for lastprivate(i)
#include <stdio.h>
int main(void) {
  int a[123];
  int i;
  __builtin_csa_parallel_loop();
  for (i = 0; i < 123; i += 2)
    a[i] = i;
  printf("%d %d\n", i, a[122]);
  return 0;
}
