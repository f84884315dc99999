// expect-refused: x
#include <stdio.h>
int main(void) {
  int x = 1, y = 0;
  int reg = __builtin_csa_parallel_region_entry(0);
  int sec0 = __builtin_csa_parallel_section_entry(reg);
  x = x + 1;
  __builtin_csa_parallel_section_exit(sec0);
  int sec1 = __builtin_csa_parallel_section_entry(reg);
  y = x * 2;
  __builtin_csa_parallel_section_exit(sec1);
  __builtin_csa_parallel_region_exit(reg);
  printf("%d %d\n", x, y);
  return 0;
}
