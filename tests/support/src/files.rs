//! Reading and listing test files.

use std::path::{Path, PathBuf};

/// The files of `dir` whose names end with `suffix`, sorted; empty when
/// the directory cannot be read.
pub fn sorted_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Every entry of `dir`, sorted; empty when it cannot be read.
pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    sorted_files(dir, "")
}

/// A file's text, or empty when it cannot be read (the comparison then
/// fails and names the file).
pub fn read_or_empty(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A file's text with invalid UTF-8 replaced (corpus files are UTF-8, some
/// parser rejects are not); panics naming the file when it cannot be read.
pub fn read_lossy(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The value of a `// key: value` line among a case file's leading
/// comment lines (the data-driven cases' headers: `// pipeline: …`).
pub fn case_header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|line| line.starts_with("//"))
        .find_map(|line| {
            line.trim_start_matches('/')
                .trim()
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .map(|value| value.trim().to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_files_filters_by_suffix_and_sorts() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = sorted_files(&dir, ".rs");
        assert!(files.len() >= 5);
        assert!(files.windows(2).all(|w| w[0] < w[1]));
        assert!(files.iter().any(|f| f.ends_with("lib.rs")));
        assert!(sorted_files(&dir.join("absent"), ".rs").is_empty());
        assert_eq!(read_or_empty(&dir.join("absent.rs")), "");
        assert!(read_lossy(&dir.join("files.rs")).contains("fn read_lossy"));
    }
}
