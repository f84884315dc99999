// expect-refused: a
// expect-ivdep-refused: a
#include <stdio.h>
int main(void) {
  int a[101];
  for (int i = 0; i < 101; i++) a[i] = i;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 100; i++)
    a[i] = a[i + 1] * 2;
  long s = 0;
  for (int i = 0; i < 100; i++) s += a[i] * (i + 1);
  printf("%ld\n", s);
  return 0;
}
