/* Empty CSA builtins for building the validation programs with gcc. */
#define __builtin_csa_parallel_loop() ((void)0)
#define __builtin_csa_spmd(w, c) ((void)0)
#define __builtin_csa_spmdization(w, k) ((void)0)
#define __builtin_csa_pipeline_loop(d) ((void)0)
#define __builtin_csa_parallel_region_entry(id) 0
#define __builtin_csa_parallel_region_exit(r) ((void)0)
#define __builtin_csa_parallel_section_entry(r) 0
#define __builtin_csa_parallel_section_exit(s) ((void)0)
