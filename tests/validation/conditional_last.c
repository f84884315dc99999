// expect-refused: found
#include <stdio.h>
int main(void) {
  int a[200];
  int found = -1;
  for (int i = 0; i < 200; i++) a[i] = (i * 13) % 50;
  __builtin_csa_parallel_loop();
  for (int i = 0; i < 200; i++) {
    if (a[i] == 7)
      found = i;
  }
  printf("%d\n", found);
  return 0;
}
