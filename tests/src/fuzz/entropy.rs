//! The source of every random choice the fuzzing generators make: either the
//! bytes libFuzzer hands a target (so that its mutations steer the choices)
//! or a seeded generator (so that a plain `cargo test` loop can produce as
//! many inputs as it likes, reproducibly, without a fuzzing engine).

/// Random choices drawn from bytes or from a seed.
pub struct Entropy {
    source: Source,
}

enum Source {
    /// libFuzzer's input: each choice consumes as few bytes as it needs;
    /// once they run out every choice is the first option, so generation
    /// still terminates with a small program.
    Bytes { data: Vec<u8>, pos: usize },
    /// SplitMix64: tiny, fast, and good enough to spread choices.
    Seeded { state: u64 },
}

impl Entropy {
    /// Choices read from `data`.
    pub fn from_bytes(data: &[u8]) -> Entropy {
        Entropy {
            source: Source::Bytes {
                data: data.to_vec(),
                pos: 0,
            },
        }
    }

    /// Choices from a seeded pseudo-random sequence.
    pub fn from_seed(seed: u64) -> Entropy {
        Entropy {
            source: Source::Seeded { state: seed },
        }
    }

    /// Whether a byte-driven source has run out (a seeded one never does).
    pub fn is_exhausted(&self) -> bool {
        match &self.source {
            Source::Bytes { data, pos } => *pos >= data.len(),
            Source::Seeded { .. } => false,
        }
    }

    fn next_byte(&mut self) -> u8 {
        match &mut self.source {
            Source::Bytes { data, pos } => {
                let byte = data.get(*pos).copied().unwrap_or(0);
                *pos += 1;
                byte
            }
            Source::Seeded { .. } => self.next_u64() as u8,
        }
    }

    /// A uniformly distributed 64-bit value (built from 8 bytes when driven
    /// by bytes).
    pub fn next_u64(&mut self) -> u64 {
        match &mut self.source {
            Source::Bytes { .. } => {
                let mut value = 0u64;
                for _ in 0..8 {
                    value = (value << 8) | u64::from(self.next_byte());
                }
                value
            }
            Source::Seeded { state } => {
                *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = *state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            }
        }
    }

    /// A value in `0..n` (`0` when `n` is 0). Byte-driven choices among at
    /// most 256 options take one byte, so that each mutation of libFuzzer
    /// changes one decision.
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        if n <= 256 {
            if let Source::Bytes { .. } = self.source {
                return usize::from(self.next_byte()) % n;
            }
        }
        (self.next_u64() % n as u64) as usize
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        lo + self.below((hi - lo + 1) as usize) as i64
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Entropy;

    #[test]
    fn bytes_drive_choices_and_run_out_to_the_first_option() {
        let mut e = Entropy::from_bytes(&[3, 250]);
        assert_eq!(e.below(10), 3);
        assert_eq!(e.below(7), 250 % 7);
        assert!(e.is_exhausted());
        assert_eq!(e.below(10), 0);
    }

    #[test]
    fn seeds_are_reproducible_and_differ() {
        let a: Vec<usize> = {
            let mut e = Entropy::from_seed(7);
            (0..20).map(|_| e.below(1000)).collect()
        };
        let b: Vec<usize> = {
            let mut e = Entropy::from_seed(7);
            (0..20).map(|_| e.below(1000)).collect()
        };
        let c: Vec<usize> = {
            let mut e = Entropy::from_seed(8);
            (0..20).map(|_| e.below(1000)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
