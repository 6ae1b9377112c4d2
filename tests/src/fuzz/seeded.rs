//! Inputs for fuzz targets without a fuzzing engine: the in-repository seed
//! corpora (`fuzz/seeds/<target>/`) and seeded mutations of them, for the
//! stable short runs of the test suite and the seeded campaign runner
//! (`cargo run --release -p relay-tests --example fuzz_campaign`).

use super::entropy::Entropy;
use super::program::generate;
use super::targets::campaign_limits;
use std::path::{Path, PathBuf};

/// The seed directory of `target` (`parse`, `infer`, `passes`, `lsp`).
pub fn seed_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target)
}

/// The seed files of `target`, sorted.
pub fn seed_files(target: &str) -> Vec<PathBuf> {
    let dir = seed_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// `base` mutated: bytes deleted, duplicated or replaced, punctuation
/// inserted, or a piece of `other` spliced in, as libFuzzer's mutators do.
pub fn mutate(e: &mut Entropy, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for _ in 0..e.range(1, 8) {
        let len = bytes.len();
        let at = e.below(len + 1);
        match e.below(5) {
            0 if len > 0 => {
                let end = (at + e.below(16)).min(len);
                bytes.drain(at..end);
            }
            1 if !other.is_empty() => {
                let from = e.below(other.len());
                let end = (from + e.below(64)).min(other.len());
                bytes.splice(at..at, other[from..end].iter().copied());
            }
            2 if at < len => bytes[at] = e.next_u64() as u8,
            3 => bytes.insert(at, *e.pick(b"(){}[],;=%@.\n\"0f")),
            _ => {
                let end = (at + e.below(8)).min(len);
                let piece = bytes[at..end].to_vec();
                bytes.splice(at..at, piece);
            }
        }
    }
    bytes
}

/// A text input: a generated module (one in five) or a mutated seed.
pub fn text_input(e: &mut Entropy, corpus: &[Vec<u8>]) -> Vec<u8> {
    if corpus.is_empty() || e.chance(20) {
        return generate(e, campaign_limits()).text.into_bytes();
    }
    let base = &corpus[e.below(corpus.len())];
    let other = &corpus[e.below(corpus.len())];
    mutate(e, base, other)
}
