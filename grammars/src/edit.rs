//! What changed between two versions of a text, as one byte range: the
//! common prefix and suffix of the two are kept, the bytes between replaced.

/// The change from an old text to a new one: `old[start..old_end]` became
/// `new[start..new_end]`; everything before `start` and after the ends is
/// the same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub start: usize,
    pub old_end: usize,
    pub new_end: usize,
}

impl TextEdit {
    /// The smallest edit turning `old` into `new` (longest common prefix,
    /// then longest common suffix of the rest); `None` when they are equal.
    pub fn between(old: &str, new: &str) -> Option<TextEdit> {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        // Compare in blocks (memcmp) first, then byte by byte.
        const BLOCK: usize = 256;
        let limit = a.len().min(b.len());
        let mut prefix = 0;
        while prefix + BLOCK <= limit && a[prefix..prefix + BLOCK] == b[prefix..prefix + BLOCK] {
            prefix += BLOCK;
        }
        while prefix < limit && a[prefix] == b[prefix] {
            prefix += 1;
        }
        if prefix == a.len() && prefix == b.len() {
            return None;
        }
        let max_suffix = limit - prefix;
        let mut suffix = 0;
        while suffix + BLOCK <= max_suffix
            && a[a.len() - suffix - BLOCK..a.len() - suffix]
                == b[b.len() - suffix - BLOCK..b.len() - suffix]
        {
            suffix += BLOCK;
        }
        while suffix < max_suffix && a[a.len() - 1 - suffix] == b[b.len() - 1 - suffix] {
            suffix += 1;
        }
        Some(TextEdit {
            start: prefix,
            old_end: a.len() - suffix,
            new_end: b.len() - suffix,
        })
    }

    /// How far the text after the edit moved (new length minus old).
    pub fn delta(&self) -> isize {
        self.new_end as isize - self.old_end as isize
    }

    /// Whether the edit is consistent with texts of these lengths.
    pub fn fits(&self, old_len: usize, new_len: usize) -> bool {
        self.start <= self.old_end
            && self.start <= self.new_end
            && self.old_end <= old_len
            && self.new_end <= new_len
            && old_len - self.old_end == new_len - self.new_end
    }

    /// An offset of the old text moved to the new one: offsets up to
    /// `start` stay, offsets from `old_end` move with the text after the
    /// edit, offsets inside the replaced bytes go to its end.
    pub fn map(&self, offset: usize) -> usize {
        if offset <= self.start {
            offset
        } else if offset >= self.old_end {
            (offset as isize + self.delta()) as usize
        } else {
            self.new_end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_and_suffix() {
        let e = TextEdit::between("ab\ncd\nef", "ab\ncXY\nZd\nef").unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (4, 4, 8));
        assert_eq!(e.delta(), 4);
        assert!(e.fits(8, 12));
        assert!(TextEdit::between("same", "same").is_none());
        let e = TextEdit::between("aaaa", "aa").unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (2, 4, 2));
        let long_a = "x".repeat(1000) + "A" + &"y".repeat(1000);
        let long_b = "x".repeat(1000) + "BC" + &"y".repeat(1000);
        let e = TextEdit::between(&long_a, &long_b).unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (1000, 1001, 1002));
        assert_eq!(e.map(5), 5);
        assert_eq!(e.map(1500), 1501);
    }
}
