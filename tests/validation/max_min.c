// expect: #pragma omp parallel for reduction(max:mx) reduction(min:mn)
#include <stdio.h>
int main(void) {
  int a[5000];
  int mx = -1, mn = 1 << 30;
  for (int i = 0; i < 5000; i++) a[i] = (i * 104729) % 50021;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 5000; i++) {
    if (a[i] > mx) mx = a[i];
    mn = a[i] < mn ? a[i] : mn;
  }
  printf("%d %d\n", mx, mn);
  return 0;
}
