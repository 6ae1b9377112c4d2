//! Tallying our outputs against TVM's: [`compare`] tells an equal
//! output from one whose types differ and from one whose structure (or
//! only its `#[metadata]` section) differs; [`Tally`] counts a directory
//! of pass records and prints the misses.

use crate::text::{before_metadata, first_difference, normalize, strip_types};
use crate::tvm::PassRecord;
use std::path::PathBuf;

/// How one output compares with TVM's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    /// Equal with and without types.
    Equal,
    /// Equal without `/* ty=… */` comments; the types differ (or were not
    /// compared when the record says they cannot be).
    StructureOnly {
        types_compared: bool,
        detail: String,
    },
    /// Different even without types; `metadata_only` when the text before
    /// the `#[metadata]` section is equal.
    Different { metadata_only: bool, detail: String },
}

/// Compares `ours` with TVM's `expected` as the conformance script does.
pub fn compare(ours: &str, expected: &str, compare_types: bool) -> Comparison {
    let (ours_s, tvm_s) = (
        normalize(&strip_types(ours)),
        normalize(&strip_types(expected)),
    );
    if ours_s != tvm_s {
        return Comparison::Different {
            metadata_only: before_metadata(&ours_s) == before_metadata(&tvm_s),
            detail: first_difference(&ours_s, &tvm_s),
        };
    }
    if !compare_types {
        return Comparison::StructureOnly {
            types_compared: false,
            detail: String::new(),
        };
    }
    let (ours_t, tvm_t) = (normalize(ours), normalize(expected));
    if ours_t == tvm_t {
        Comparison::Equal
    } else {
        Comparison::StructureOnly {
            types_compared: true,
            detail: first_difference(&ours_t, &tvm_t),
        }
    }
}

/// The tally of one record directory.
#[derive(Default, Debug)]
pub struct Tally {
    pub records: usize,
    pub structure: usize,
    /// Structure misses whose only difference is in the `#[metadata]`
    /// section.
    pub metadata_only: usize,
    pub typed: usize,
    pub typed_checked: usize,
    pub errors_expected: usize,
    pub errors_ok: usize,
    pub misses: Vec<String>,
}

impl Tally {
    /// Counts one record's result. `RELAY_CORPUS_VERBOSE=1` adds the first
    /// differing line to each miss; `RELAY_CORPUS_DUMP=dir` writes our
    /// print of each miss there.
    pub fn add(&mut self, record: &PassRecord, result: Result<String, String>) {
        let name = record.name();
        self.records += 1;
        let Some(expected) = &record.expected else {
            self.errors_expected += 1;
            match result {
                Err(_) => self.errors_ok += 1,
                Ok(_) => self.misses.push(format!("{name}: TVM failed, we did not")),
            }
            return;
        };
        let ours = match result {
            Ok(text) => text,
            Err(message) => {
                self.misses.push(format!("{name}: {message}"));
                return;
            }
        };
        let verbose = std::env::var("RELAY_CORPUS_VERBOSE").is_ok();
        let shown = |detail: String| if verbose { detail } else { String::new() };
        let miss = match compare(&ours, expected, !record.structure_only()) {
            Comparison::Equal => {
                self.structure += 1;
                self.typed_checked += 1;
                self.typed += 1;
                None
            }
            Comparison::StructureOnly {
                types_compared,
                detail,
            } => {
                self.structure += 1;
                if types_compared {
                    self.typed_checked += 1;
                    Some(format!("{name}: types differ {}", shown(detail)))
                } else {
                    None
                }
            }
            Comparison::Different {
                metadata_only,
                detail,
            } => {
                if metadata_only {
                    self.metadata_only += 1;
                }
                let what = if metadata_only {
                    "only the metadata section differs"
                } else {
                    "structure differs"
                };
                Some(format!("{name}: {what} {}", shown(detail)))
            }
        };
        if let Some(miss) = miss {
            if let Ok(dir) = std::env::var("RELAY_CORPUS_DUMP") {
                let dir = PathBuf::from(dir);
                let _ = std::fs::create_dir_all(&dir);
                let file = format!("{}-{}.ours.relay", record.dir, record.stem);
                let _ = std::fs::write(dir.join(file), &ours);
            }
            self.misses.push(miss);
        }
    }

    /// A record that could not be read counts as a miss.
    pub fn add_unreadable(&mut self, message: String) {
        self.records += 1;
        self.misses.push(message);
    }

    /// No record was found although none was filtered out: the directory is
    /// missing or empty, which must not pass silently.
    pub fn found_nothing(&self) -> bool {
        self.records == 0 && std::env::var("RELAY_CORPUS_FILTER").is_err()
    }

    /// Records TVM gave a result for.
    pub fn expected_ok(&self) -> usize {
        self.records - self.errors_expected
    }

    /// Prints the counts and the misses.
    pub fn report(&self, dir: &str) {
        eprintln!(
            "{dir}: {} records; structure {}/{} ({} more differing only in the metadata \
             section); typed {}/{}; errors {}/{}",
            self.records,
            self.structure,
            self.expected_ok(),
            self.metadata_only,
            self.typed,
            self.typed_checked,
            self.errors_ok,
            self.errors_expected
        );
        for miss in &self.misses {
            eprintln!("  miss: {miss}");
        }
    }

    /// Every record matched TVM: structure, types where compared, errors.
    pub fn all_match(&self) -> bool {
        self.structure == self.expected_ok()
            && self.typed == self.typed_checked
            && self.errors_ok == self.errors_expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_tells_structure_from_types_and_metadata() {
        assert_eq!(
            compare("f(%x /* ty=A */)", "f(%x /* ty=A */)", true),
            Comparison::Equal
        );
        assert!(matches!(
            compare("f(%x /* ty=A */)", "f(%x /* ty=B */)", true),
            Comparison::StructureOnly {
                types_compared: true,
                ..
            }
        ));
        assert!(matches!(
            compare("f\n#[metadata]\n1", "f\n#[metadata]\n2", true),
            Comparison::Different {
                metadata_only: true,
                ..
            }
        ));
        assert!(matches!(
            compare("f", "g", true),
            Comparison::Different {
                metadata_only: false,
                ..
            }
        ));
    }
}
