// The release of a whole tree-sitter tree (see src/lib.rs, `release`).
//
// What `ts_tree_delete` does, with the same internal headers as
// flat_copy.c: every subtree whose last reference the tree held is freed,
// with its external scanner state. `ts_subtree_release` takes each
// reference away with an atomic decrement, whose latency (not its
// instruction count) was most of the time of a release; a subtree that
// holds the only reference to another (a count of 1, read with acquire
// ordering) cannot share it with anything else, so its child is freed
// without one. Shared subtrees (a count above 1: a tree copied or reused
// by an incremental parse) are decremented atomically, as the library
// does.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tree_sitter/api.h"
#include "alloc.h"
#include "atomic.h"
#include "language.h"
#include "subtree.h"
#include "tree.h"

// Whether the reference to `t` just given up was its last one.
static inline bool last_reference(SubtreeHeapData *t) {
  uint32_t *count = &t->ref_count;
  if (__atomic_load_n(count, __ATOMIC_ACQUIRE) == 1) return true;
  return atomic_dec((volatile uint32_t *)count) == 0;
}

// Gives up the references in `refs` (`n` of them) as the library does.
static void release_each(const Subtree *refs, uint32_t n) {
  SubtreePool pool = ts_subtree_pool_new(0);
  for (uint32_t i = 0; i < n; i++) ts_subtree_release(&pool, refs[i]);
  ts_subtree_pool_delete(&pool);
}

static void delete_tree_itself(TSTree *self) {
  ts_language_delete(self->language);
  ts_free(self->included_ranges);
  ts_free(self);
}

// Releases `self`, a tree that nothing else uses (its `TSTree` is freed
// too), as `ts_tree_delete` does.
void csa_tree_delete(TSTree *self) {
  if (!self) return;
  // The references still to give up, each to a subtree not inline; a
  // subtree's is given up when it is popped, so that the loads of the
  // reference counts pushed together (a node's children) overlap.
  uint32_t capacity = 256;
  Subtree *stack = malloc(capacity * sizeof(*stack));
  if (!stack) {
    ts_tree_delete(self);
    return;
  }
  uint32_t size = 0;
  if (!self->root.data.is_inline) stack[size++] = self->root;
  while (size > 0) {
    SubtreeHeapData *t = (SubtreeHeapData *)stack[--size].ptr;
    if (!last_reference(t)) continue;
    uint32_t count = t->child_count;
    if (count == 0) {
      if (t->has_external_tokens) ts_external_scanner_state_delete(&t->external_scanner_state);
      ts_free(t);
      continue;
    }
    Subtree *children = (Subtree *)t - count;
    if (count > capacity - size) {
      uint32_t cap = capacity;
      while (count > cap - size && cap <= UINT32_MAX / 2) cap *= 2;
      Subtree *grown = count <= cap - size ? realloc(stack, (size_t)cap * sizeof(*stack)) : NULL;
      if (!grown) {
        // no memory for the walk: what is left goes as the library
        // releases it
        release_each(children, count);
        ts_free(children);
        release_each(stack, size);
        free(stack);
        delete_tree_itself(self);
        return;
      }
      stack = grown;
      capacity = cap;
    }
    for (uint32_t i = 0; i < count; i++) {
      Subtree child = children[i];
      if (child.data.is_inline) continue;
      __builtin_prefetch(child.ptr);
      stack[size++] = child;
    }
    // (a node's children and its own data are one block)
    ts_free(children);
  }
  free(stack);
  delete_tree_itself(self);
}
