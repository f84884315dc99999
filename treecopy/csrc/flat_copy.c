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

typedef struct {
  const Subtree *subtree;
  // Where its children's iteration stands.
  uint32_t child_index;
  uint32_t structural_index;
  Length position;
  const TSSymbol *aliases;
  // Its own place in its parent's children (not counting extras).
  uint32_t structural_child_index;
  bool visible;
  bool extra;
  // Visible: its index in the copy; else the index of its nearest
  // visible ancestor.
  uint32_t owner;
  // The stack position of that visible entry.
  uint32_t owner_entry;
  // Visible: its last child copied so far (CSA_NONE: none yet).
  uint32_t last_child;
} Entry;

// The entry of a subtree whose children are to be walked (`structural`:
// its place among its parent's children; `owner`, `owner_entry`: itself
// and its own stack position when visible, else its nearest visible
// ancestor's).
static Entry entry_of(const TSLanguage *lang, const Subtree *t, Length position, uint32_t structural,
                      bool visible, bool extra, uint32_t owner, uint32_t owner_entry) {
  return (Entry){
    .subtree = t,
    .child_index = 0,
    .structural_index = 0,
    .position = position,
    .aliases = ts_language_alias_sequence(lang, ts_subtree_production_id(*t)),
    .structural_child_index = structural,
    .visible = visible,
    .extra = extra,
    .owner = owner,
    .owner_entry = owner_entry,
    .last_child = CSA_NONE,
  };
}

typedef struct {
  Entry *items;
  uint32_t size;
  uint32_t capacity;
} Stack;

static bool stack_push(Stack *s, Entry e) {
  if (s->size == s->capacity) {
    uint32_t cap = s->capacity ? s->capacity * 2 : 64;
    Entry *items = realloc(s->items, (size_t)cap * sizeof(Entry));
    if (!items) return false;
    s->items = items;
    s->capacity = cap;
  }
  s->items[s->size++] = e;
  return true;
}

// The field of a visible child (`structural`, `extra`: its own) whose
// parent entry is the top of `s` (the cursor's `current_field_id`).
static uint16_t field_of(const TSLanguage *lang, const Stack *s, uint32_t structural, bool extra) {
  uint32_t index = structural;
  bool is_extra = extra;
  for (uint32_t i = s->size; i > 0; i--) {
    const Entry *parent = &s->items[i - 1];
    if (i != s->size) {
      // `index`, `is_extra` describe s->items[i]
      if (s->items[i].visible) break;
    }
    if (is_extra) break;
    const TSFieldMapEntry *map, *map_end;
    ts_language_field_map(lang, ts_subtree_production_id(*parent->subtree), &map, &map_end);
    for (; map < map_end; map++) {
      if (!map->inherited && map->child_index == index) return map->field_id;
    }
    index = parent->structural_child_index;
    is_extra = parent->extra;
  }
  return 0;
}

static uint8_t flags_of(const TSLanguage *lang, Subtree t, TSSymbol alias, TSSymbol *kind) {
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
  Entry first = entry_of(lang, root_subtree, root_position, 0, true, false, 0, 0);
  if (!stack_push(&s, first)) return CSA_NONE;
  // The number of visible entries on the stack: the depth of their
  // children.
  uint32_t depth = 1;
  while (s.size > 0) {
    Entry *top = &s.items[s.size - 1];
    Subtree parent = *top->subtree;
    uint32_t count = ts_subtree_child_count(parent);
    if (top->child_index == count) {
      if (top->visible) depth--;
      s.size--;
      continue;
    }
    const Subtree *child = &ts_subtree_children(parent)[top->child_index];
    // the walk is bound by the latency of loading each subtree: ask for
    // the next sibling's while this one is copied
    if (top->child_index + 1 < count) {
      Subtree next = child[1];
      if (!next.data.is_inline) __builtin_prefetch(next.ptr);
    }
    Length position = top->position;
    bool extra = ts_subtree_extra(*child);
    bool visible = ts_subtree_visible(*child);
    uint32_t structural = top->structural_index;
    TSSymbol alias = 0;
    if (!extra) {
      if (top->aliases) {
        alias = top->aliases[structural];
        visible |= alias != 0;
      }
      top->structural_index++;
    }
    top->child_index++;
    if (unasked != CSA_NONE && depth > unasked) {
      // inside a subtree copied unasked: no node is made for a question,
      // so only byte offsets are kept (a position's row and column are
      // left as they were)
      top->position.bytes += ts_subtree_size(*child).bytes;
      if (top->child_index < count) {
        top->position.bytes += ts_subtree_padding(ts_subtree_children(parent)[top->child_index]).bytes;
      }
    } else {
      top->position = length_add(position, ts_subtree_size(*child));
      if (top->child_index < count) {
        top->position = length_add(top->position, ts_subtree_padding(ts_subtree_children(parent)[top->child_index]));
      }
    }
    uint32_t children = ts_subtree_child_count(*child);
    if (!visible) {
      if (children > 0) {
        Entry e = entry_of(lang, child, position, structural, false, extra, top->owner, top->owner_entry);
        if (!stack_push(&s, e)) {
          free(s.items);
          return CSA_NONE;
        }
      }
      continue;
    }
    if (len == capacity) {
      free(s.items);
      return CSA_NONE;
    }
    uint32_t owner = top->owner;
    uint32_t idx = len++;
    flags = flags_of(lang, *child, alias, &kind);
    size = ts_subtree_size(*child);
    uint16_t field = field_of(lang, &s, structural, extra);
    out[idx] = (CsaFlatNode){position.bytes, position.bytes + size.bytes, owner, CSA_NONE, 0, kind, field, flags};
    out[owner].count++;
    Entry *owner_entry = &s.items[top->owner_entry];
    if (owner_entry->last_child != CSA_NONE) out[owner_entry->last_child].next = idx;
    owner_entry->last_child = idx;
    if (unasked != CSA_NONE && depth <= unasked) unasked = CSA_NONE;
    answer = CSA_DESCEND;
    if (descend && unasked == CSA_NONE && asked(kinds, kind_count, kind)) {
      TSNode node = ts_node_new(tree, child, position, alias);
      answer = descend(ctx, node, depth, idx);
      if (answer == CSA_DESCEND_UNASKED) unasked = depth;
    }
    if (children == 0) continue;
    if (answer == CSA_PRUNE) {
      if (child->ptr->visible_child_count > 0) out[idx].flags |= CSA_PRUNED;
      continue;
    }
    Entry e = entry_of(lang, child, position, structural, true, extra, idx, s.size);
    if (!stack_push(&s, e)) {
      free(s.items);
      return CSA_NONE;
    }
    depth++;
  }
  free(s.items);
  return len;
}
