//! Graph algorithms on CFGs given as successor lists (`succs[b]` lists the
//! successors of block `b`): dominators, post-dominators with a virtual exit,
//! natural loops and their nesting, irreducibility, and LoopSimplify.
//!
//! Conventions shared by every algorithm in this module:
//! * blocks are dense `u32` ids indexing `succs`; block 0 is the function
//!   entry unless an entry is passed explicitly;
//! * successor ids that are out of range (`>= succs.len()`) are ignored;
//! * blocks unreachable from the entry are normal and take part in nothing;
//! * nothing recurses (CFGs can have 100k blocks) and nothing panics.

pub mod dom;
pub mod loops;
pub mod simplify;

/// "No value" marker in dense `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Predecessor lists of all blocks, indexed by block id. Each list is in
/// ascending block order and holds each predecessor once, however many edges
/// it has to the block. Out-of-range successor ids are ignored.
pub fn predecessors(succs: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); succs.len()];
    for (b, ss) in succs.iter().enumerate() {
        let b = b as u32;
        for &s in ss {
            if let Some(p) = preds.get_mut(s as usize) {
                // Blocks are visited in ascending order, so a duplicate edge
                // from `b` can only be the last entry.
                if p.last() != Some(&b) {
                    p.push(b);
                }
            }
        }
    }
    preds
}

/// Depth-first post-order of the blocks reachable from `entry`, successors
/// visited in listed order. Empty when `entry` is out of range. Iterative.
pub fn post_order(succs: &[Vec<u32>], entry: u32) -> Vec<u32> {
    let n = succs.len();
    let mut order = Vec::new();
    if entry as usize >= n {
        return order;
    }
    let mut visited = vec![false; n];
    // (block, index of the next successor to look at)
    let mut stack: Vec<(u32, usize)> = vec![(entry, 0)];
    visited[entry as usize] = true;
    while let Some(top) = stack.last_mut() {
        let (b, i) = *top;
        let ss = &succs[b as usize];
        if i < ss.len() {
            top.1 += 1;
            let s = ss[i];
            if let Some(v) = visited.get_mut(s as usize) {
                if !*v {
                    *v = true;
                    stack.push((s, 0));
                }
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order
}

/// Reverse post-order of the blocks reachable from `entry` (successors
/// visited in listed order). `entry` comes first; every block comes after
/// its DFS-tree parent, and after each of its dominators.
pub fn reverse_post_order(succs: &[Vec<u32>], entry: u32) -> Vec<u32> {
    let mut order = post_order(succs, entry);
    order.reverse();
    order
}

/// `reachable[b]`: block `b` can be reached from `entry`.
pub fn reachable(succs: &[Vec<u32>], entry: u32) -> Vec<bool> {
    let n = succs.len();
    let mut seen = vec![false; n];
    if entry as usize >= n {
        return seen;
    }
    seen[entry as usize] = true;
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        for &s in &succs[b as usize] {
            if let Some(v) = seen.get_mut(s as usize) {
                if !*v {
                    *v = true;
                    work.push(s);
                }
            }
        }
    }
    seen
}

/// Successors of `b` that are in range, in listed order (duplicates kept).
pub(crate) fn valid_succs(succs: &[Vec<u32>], b: u32) -> impl Iterator<Item = u32> + '_ {
    let n = succs.len();
    succs
        .get(b as usize)
        .map_or(&[][..], |v| v.as_slice())
        .iter()
        .copied()
        .filter(move |&s| (s as usize) < n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preds_dedup_and_ignore_out_of_range() {
        let succs = vec![vec![1, 1, 2, 7], vec![2], vec![0, 2], vec![]];
        assert_eq!(
            predecessors(&succs),
            vec![vec![2], vec![0], vec![0, 1, 2], vec![]]
        );
    }

    #[test]
    fn rpo_lists_entry_first_and_skips_unreachable() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; 4 unreachable
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![], vec![0]];
        assert_eq!(post_order(&succs, 0), vec![3, 1, 2, 0]);
        assert_eq!(reverse_post_order(&succs, 0), vec![0, 2, 1, 3]);
        assert_eq!(reachable(&succs, 0), vec![true, true, true, true, false]);
        assert!(reverse_post_order(&succs, 9).is_empty());
        assert!(reverse_post_order(&[], 0).is_empty());
    }

    #[test]
    fn deep_chain_does_not_overflow() {
        let n = 200_000u32;
        let succs: Vec<Vec<u32>> = (0..n)
            .map(|b| if b + 1 < n { vec![b + 1] } else { vec![] })
            .collect();
        let rpo = reverse_post_order(&succs, 0);
        assert_eq!(rpo.len(), n as usize);
        assert_eq!(rpo[0], 0);
        assert_eq!(*rpo.last().unwrap(), n - 1);
    }
}
