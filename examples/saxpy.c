/* Annotated C loops that show what csa-lint reports.
 * Run: csa-lint examples/ */
#include <math.h>

int N;

void saxpy(float a, const float *x, float *y, int n) {
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

/* CSA101: the read of x[i] and the write to y[i] are separated by a way
 * out of the loop. */
void saxpy_until_nan(float a, const float *x, float *y, int n) {
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < n; i++) {
    if (isnan(x[i])) break;
    y[i] = a * x[i] + y[i];
  }
}

/* CSA101: the global bound N cannot be hoisted: the store to y[i] (an
 * int) may write it. */
void clear_to_global(int *y) {
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < N; i++) y[i] = 0;
}

/* CSA102: everything lives in registers. */
int triangle(int n) {
  int s = 0;
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  for (int i = 0; i < n; i++) s += i;
  return s;
}

/* CSA105: the if/else merges control flow before the loop. */
void scale(float *y, int n, int big) {
  float f;
#ifdef __CSA__
  __builtin_csa_parallel_loop();
#endif
  if (big)
    f = 2.0f;
  else
    f = 1.0f;
  for (int i = 0; i < n; i++) y[i] *= f;
}

/* CSA106, CSA103, CSA111, CSA104, CSA110, CSA401. */
void markers(float *y, int n, int m) {
  __builtin_csa_parallel_loop();
  __builtin_csa_spmd(4, 0);
  for (int i = 0; i < n; i++) y[i] = 0.0f;
#ifdef __CSA__
  __builtin_csa_spmdization(4, "blocks");
  for (int i = 0; i < n; i++) y[i] = 1.0f;
  __builtin_csa_spmd(1, 0);
  for (int i = 0; i < n; i++) y[i] = 2.0f;
  for (int i = 0; i < n; i++) {
    __builtin_csa_pipeline_loop(-1);
    for (int j = 0; j < m; j++) y[i] += y[j];
  }
  __builtin_csa_parallel_loop();
  for (int i = 0; i < n; i++) y[i] = (float)__builtin_csa_spmd_worker_num();
#endif
}
