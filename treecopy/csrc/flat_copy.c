// The flat copy of a tree-sitter subtree (see analyzer/src/frontend/flat.rs).
//
// One walk over tree-sitter's own subtree arrays, written against the
// library's internal headers (the tree-sitter crate's `src/`, the same
// version the crate links: Cargo.lock pins it). It yields what a
// `TSTreeCursor` walk in pre-order yields through the public API (the
// visible nodes; their kind, byte range, flags, and field in their parent)
// without the API's cost per node: the cursor recomputes each node from
// its stack on every step, and every answer is a separate call.
//
// What a node is follows the library's definitions (tree_cursor.c,
// node.c): a child is visible when its subtree is, or when it is not an
// extra and its parent's production aliases it; invisible children with
// children are walked through, their visible descendants being children of
// the nearest visible ancestor; a visible node's field is the first
// non-inherited field-map entry naming it, or naming one of its invisible
// ancestors below the nearest visible one (stopping at an extra). The Rust
// side checks the result against the public API on every fixture.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tree_sitter/api.h"
#include "language.h"
#include "length.h"
#include "subtree.h"
#include "tree.h"

#define CSA_NONE UINT32_MAX
#define CSA_NAMED 1
#define CSA_ERROR 2
#define CSA_MISSING 4
#define CSA_PRUNED 8
#define CSA_HAS_ERROR 16

// Must match `Data` in flat.rs (`#[repr(C)]`; its size is checked).
typedef struct {
  uint32_t start;
  uint32_t end;
  uint32_t parent;
  uint32_t next;
  uint32_t count;
  uint16_t kind;
  uint16_t field;
  uint8_t flags;
} CsaFlatNode;

uint32_t csa_flat_node_size(void) { return (uint32_t)sizeof(CsaFlatNode); }

// Whether to copy the children of the node just copied (`depth`: 0 for the
// root of the copy; `index`: the node's in the copy): CSA_PRUNE,
// CSA_DESCEND, or CSA_DESCEND_UNASKED (copy the whole subtree without
// asking about its nodes). NULL: always (no node is made for the
// question).
typedef uint8_t (*CsaDescend)(void *ctx, TSNode node, uint32_t depth, uint32_t index);
#define CSA_PRUNE 0
#define CSA_DESCEND 1
#define CSA_DESCEND_UNASKED 2

// Whether `descend` is asked about a node of kind `kind`: when `kinds` is
// NULL, always; else when `kind` is one of its `kind_count` entries.
static inline bool asked(const uint16_t *kinds, uint32_t kind_count, TSSymbol kind) {
  if (!kinds) return true;
  for (uint32_t i = 0; i < kind_count; i++) {
    if (kinds[i] == kind) return true;
  }
  return false;
}

// A node whose children are being walked: the walk's current one is kept
// in locals, those above it on a stack.
typedef struct {
  const Subtree *children;
  uint32_t count;
  // Where its children's iteration stands.
  uint32_t child_index;
  uint32_t structural_index;
  // The start of its next child (only `bytes` is kept up to date inside
  // a subtree copied unasked).
  Length position;
  const TSSymbol *aliases;
  // Its production's field map.
  const TSFieldMapEntry *map;
  const TSFieldMapEntry *map_end;
  // Visible: its index in the copy; else the index of its nearest
  // visible ancestor.
  uint32_t owner;
  // Invisible: the field it has in its parent (the field of a visible
  // child for which its own production names none); else 0.
  TSFieldId inherited;
  bool visible;
} Frame;

static inline Frame frame_of(const TSLanguage *lang, Subtree t, Length position, bool visible, uint32_t owner,
                             TSFieldId inherited) {
  uint32_t production = ts_subtree_production_id(t);
  Frame f = {
    .children = ts_subtree_children(t),
    .count = ts_subtree_child_count(t),
    .child_index = 0,
    .structural_index = 0,
    .position = position,
    .aliases = ts_language_alias_sequence(lang, production),
    .map = NULL,
    .map_end = NULL,
    .owner = owner,
    .inherited = inherited,
    .visible = visible,
  };
  ts_language_field_map(lang, production, &f.map, &f.map_end);
  return f;
}

typedef struct {
  Frame *items;
  uint32_t size;
  uint32_t capacity;
} Stack;

static bool stack_push(Stack *s, const Frame *f) {
  if (s->size == s->capacity) {
    uint32_t cap = s->capacity ? s->capacity * 2 : 64;
    Frame *items = realloc(s->items, (size_t)cap * sizeof(Frame));
    if (!items) return false;
    s->items = items;
    s->capacity = cap;
  }
  s->items[s->size++] = *f;
  return true;
}

// Makes `g`, a child's frame, the current one (`*f`), keeping `*f` on the
// stack when it has children left: an invisible frame done with its
// children has nothing to do when popped, so it is replaced. False when
// memory ran out (the stack is then freed).
static inline bool enter(Stack *s, Frame *f, const Frame *g) {
  if (f->visible || f->child_index < f->count) {
    if (!stack_push(s, f)) {
      free(s->items);
      return false;
    }
  }
  *f = *g;
  return true;
}

// The field of a child of `f` (`structural`: its place among the
// children that are not extras; `extra`: it is one), as the cursor's
// `current_field_id` gives it: the first non-inherited entry of the
// parent's field map naming it, else, below an invisible parent, the
// parent's own field; none for an extra.
static inline TSFieldId field_in(const Frame *f, uint32_t structural, bool extra) {
  if (extra) return 0;
  for (const TSFieldMapEntry *m = f->map; m < f->map_end; m++) {
    if (!m->inherited && m->child_index == structural) return m->field_id;
  }
  return f->inherited;
}

static inline uint8_t flags_of(const TSLanguage *lang, Subtree t, TSSymbol alias, TSSymbol *kind) {
  TSSymbol symbol = alias ? alias : ts_subtree_symbol(t);
  *kind = ts_language_public_symbol(lang, symbol);
  uint8_t flags = 0;
  bool named = alias ? ts_language_symbol_metadata(lang, alias).named : ts_subtree_named(t);
  if (named) flags |= CSA_NAMED;
  if (*kind == ts_builtin_sym_error) flags |= CSA_ERROR;
  if (ts_subtree_missing(t)) flags |= CSA_MISSING;
  // what ts_node_has_error answers
  if (ts_subtree_error_cost(t) > 0) flags |= CSA_HAS_ERROR;
  return flags;
}

// Copies `root` and its visible descendants into `out` (room for
// `capacity` nodes: `ts_node_descendant_count(root)` is enough), in
// pre-order, except the descendants of nodes `descend` refuses (it is
// asked about the nodes whose kinds `kinds` lists, or about every node
// when `kinds` is NULL). Returns the
// number of nodes copied, or CSA_NONE when memory ran out.
//
// While a visible node's children are copied, its `next` holds its last
// child copied so far (the next sibling of a node is only known once its
// subtree is done); it is set back to CSA_NONE when the walk leaves it.
uint32_t csa_flat_copy(TSNode root, CsaFlatNode *out, uint32_t capacity, CsaDescend descend, void *ctx,
                       const uint16_t *kinds, uint32_t kind_count) {
  if (capacity == 0 || !root.id) return 0;
  const TSTree *tree = root.tree;
  const TSLanguage *lang = tree->language;
  const Subtree *root_subtree = (const Subtree *)root.id;
  Length root_position = {root.context[0], {root.context[1], root.context[2]}};
  TSSymbol kind;
  uint8_t flags = flags_of(lang, *root_subtree, (TSSymbol)root.context[3], &kind);
  Length size = ts_subtree_size(*root_subtree);
  out[0] = (CsaFlatNode){root_position.bytes, root_position.bytes + size.bytes, CSA_NONE, CSA_NONE, 0, kind, 0, flags};
  uint32_t len = 1;
  uint8_t answer = CSA_DESCEND;
  if (descend && asked(kinds, kind_count, kind)) answer = descend(ctx, root, 0, 0);
  if (ts_subtree_child_count(*root_subtree) == 0) return len;
  if (answer == CSA_PRUNE) {
    if (root_subtree->ptr->visible_child_count > 0) out[0].flags |= CSA_PRUNED;
    return len;
  }
  // The depth of the node whose subtree is copied unasked (CSA_NONE: none):
  // no question until the walk is back at that depth.
  // (with no `descend`, the whole tree)
  uint32_t unasked = answer == CSA_DESCEND_UNASKED || !descend ? 0 : CSA_NONE;
  Stack s = {NULL, 0, 0};
  Frame f = frame_of(lang, *root_subtree, root_position, true, 0, 0);
  // The number of visible frames on the stack and in `f`: the depth of
  // `f`'s children.
  uint32_t depth = 1;
  for (;;) {
    if (f.child_index == f.count) {
      if (f.visible) {
        depth--;
        out[f.owner].next = CSA_NONE;
      }
      if (s.size == 0) break;
      f = s.items[--s.size];
      continue;
    }
    const Subtree *child = &f.children[f.child_index];
    Subtree c = *child;
    // the walk is bound by the latency of loading each subtree: ask for
    // the next sibling's while this one is copied
    if (f.child_index + 1 < f.count) {
      Subtree next = child[1];
      if (!next.data.is_inline) __builtin_prefetch(next.ptr);
    }
    f.child_index++;
    Length position = f.position;
    bool extra = ts_subtree_extra(c);
    bool visible = ts_subtree_visible(c);
    uint32_t structural = f.structural_index;
    TSSymbol alias = 0;
    if (!extra) {
      if (f.aliases) {
        alias = f.aliases[structural];
        visible |= alias != 0;
      }
      f.structural_index++;
    }
    bool inside_unasked = unasked != CSA_NONE && depth > unasked;
    if (inside_unasked) {
      // inside a subtree copied unasked: no node is made for a question,
      // so only byte offsets are kept (a position's row and column are
      // left as they were)
      f.position.bytes += ts_subtree_size(c).bytes;
      if (f.child_index < f.count) f.position.bytes += ts_subtree_padding(child[1]).bytes;
    } else {
      f.position = length_add(position, ts_subtree_size(c));
      if (f.child_index < f.count) f.position = length_add(f.position, ts_subtree_padding(child[1]));
    }
    uint32_t children = ts_subtree_child_count(c);
    if (!visible) {
      if (children > 0) {
        Frame g = frame_of(lang, c, position, false, f.owner, field_in(&f, structural, extra));
        if (!enter(&s, &f, &g)) return CSA_NONE;
      }
      continue;
    }
    if (len == capacity) {
      free(s.items);
      return CSA_NONE;
    }
    uint32_t owner = f.owner;
    uint32_t idx = len++;
    flags = flags_of(lang, c, alias, &kind);
    uint16_t field = field_in(&f, structural, extra);
    out[idx] = (CsaFlatNode){position.bytes, position.bytes + ts_subtree_size(c).bytes, owner, CSA_NONE, 0, kind, field,
                             flags};
    out[owner].count++;
    uint32_t last = out[owner].next;
    if (last != CSA_NONE) out[last].next = idx;
    out[owner].next = idx;
    if (!inside_unasked) unasked = CSA_NONE;
    answer = CSA_DESCEND;
    if (descend && unasked == CSA_NONE && asked(kinds, kind_count, kind)) {
      TSNode node = ts_node_new(tree, child, position, alias);
      answer = descend(ctx, node, depth, idx);
      if (answer == CSA_DESCEND_UNASKED) unasked = depth;
    }
    if (children == 0) continue;
    if (answer == CSA_PRUNE) {
      if (c.ptr->visible_child_count > 0) out[idx].flags |= CSA_PRUNED;
      continue;
    }
    Frame g = frame_of(lang, c, position, true, idx, 0);
    if (!enter(&s, &f, &g)) return CSA_NONE;
    depth++;
  }
  free(s.items);
  return len;
}
