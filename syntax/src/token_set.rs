//! A set of token kinds as a bitset, for lookahead and error recovery.

use crate::SyntaxKind;

/// A set of [`SyntaxKind`]s that fits in 128 bits (all token kinds do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TokenSet(u128);

impl TokenSet {
    pub(crate) const fn new(kinds: &[SyntaxKind]) -> TokenSet {
        let mut bits = 0u128;
        let mut i = 0;
        while i < kinds.len() {
            bits |= mask(kinds[i]);
            i += 1;
        }
        TokenSet(bits)
    }

    pub(crate) const fn contains(&self, kind: SyntaxKind) -> bool {
        self.0 & mask(kind) != 0
    }
}

const fn mask(kind: SyntaxKind) -> u128 {
    let bit = kind as u16;
    if bit >= 128 {
        0
    } else {
        1u128 << bit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SyntaxKind::*;

    #[test]
    fn every_token_kind_fits() {
        assert!((EOF as u16) < 128);
        let set = TokenSet::new(&[L_PAREN, EOF]);
        assert!(set.contains(L_PAREN));
        assert!(set.contains(EOF));
        assert!(!set.contains(R_PAREN));
    }
}
