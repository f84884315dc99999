// expect-refused: prev
#include <stdio.h>
int main(void) {
  int a[100], b[100];
  int prev = 0;
  for (int i = 0; i < 100; i++) a[i] = i * 3;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 100; i++) {
    b[i] = a[i] + prev;
    prev = a[i];
  }
  long s = 0;
  for (int i = 0; i < 100; i++) s += b[i];
  printf("%ld %d\n", s, prev);
  return 0;
}
