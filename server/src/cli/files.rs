//! The inputs a command works on, from its FILE arguments: a file is taken
//! as it is, a directory stands for every `*.relay` file below it
//! (recursively, in name order, skipping hidden directories such as `.git`),
//! and `-` is standard input. `relay fmt` and `relay check` share this.

use std::path::{Path, PathBuf};

/// One input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (the argument `-`).
    Stdin,
    /// A file named on the command line or found in a directory.
    File(PathBuf),
}

impl Input {
    /// The name diagnostics and listings use.
    pub fn name(&self) -> String {
        match self {
            Input::Stdin => super::input::STDIN_NAME.to_string(),
            Input::File(path) => path.display().to_string(),
        }
    }

    /// Where `relay.toml` is looked for from: the file, made absolute, or
    /// the current directory for standard input.
    pub fn project_start(&self) -> PathBuf {
        match self {
            Input::File(path) => std::path::absolute(path).unwrap_or_else(|_| path.clone()),
            Input::Stdin => std::env::current_dir().unwrap_or_default(),
        }
    }

    /// The text, which must be UTF-8, or a message saying why it cannot
    /// be used.
    pub fn read(&self) -> Result<String, String> {
        match self {
            Input::File(path) => super::input::read_text(path),
            Input::Stdin => super::input::read_text(Path::new("-")),
        }
    }
}

/// The inputs the arguments stand for, or a message about an argument that
/// names nothing readable (a missing path, an unreadable directory).
pub fn expand(arguments: &[PathBuf]) -> Result<Vec<Input>, String> {
    let mut inputs = Vec::new();
    for argument in arguments {
        if argument.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if argument.is_dir() {
            relay_files_in(argument, &mut inputs)?;
        } else if argument.exists() {
            inputs.push(Input::File(argument.clone()));
        } else {
            return Err(format!(
                "cannot read {}: no such file or directory",
                argument.display()
            ));
        }
    }
    if inputs.iter().filter(|i| **i == Input::Stdin).count() > 1 {
        return Err("`-` (standard input) can be given only once".to_string());
    }
    Ok(inputs)
}

fn relay_files_in(dir: &Path, inputs: &mut Vec<Input>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    paths.sort();
    for path in paths {
        let hidden = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if path.is_dir() {
            if !hidden {
                relay_files_in(&path, inputs)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "relay") {
            inputs.push(Input::File(path));
        }
    }
    Ok(())
}

/// Where the project of the input `path` (`-`: standard input, from the
/// current directory) is looked up from.
pub fn start_of(path: &Path) -> PathBuf {
    if super::input::is_stdin(path) {
        Input::Stdin.project_start()
    } else {
        Input::File(path.to_path_buf()).project_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_to_their_relay_files_recursively() {
        let root = std::env::temp_dir().join(format!("relay-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        for file in [
            "b.relay",
            "a.relay",
            "notes.txt",
            "sub/deeper/c.relay",
            ".hidden/d.relay",
        ] {
            std::fs::write(root.join(file), "").unwrap();
        }
        let inputs = expand(&[root.clone(), PathBuf::from("-")]).unwrap();
        assert_eq!(
            inputs,
            vec![
                Input::File(root.join("a.relay")),
                Input::File(root.join("b.relay")),
                Input::File(root.join("sub/deeper/c.relay")),
                Input::Stdin,
            ]
        );
        // A file named explicitly is taken whatever its extension.
        let notes = root.join("notes.txt");
        assert_eq!(
            expand(std::slice::from_ref(&notes)).unwrap(),
            vec![Input::File(notes)]
        );
        assert!(expand(&[root.join("missing.relay")])
            .unwrap_err()
            .contains("no such file"));
        assert!(expand(&[PathBuf::from("-"), PathBuf::from("-")]).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
