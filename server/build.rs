//! Records the git commit the binary is built from, for `relay --version`
//! (`relay 0.1.0 (commit 1a2b3c4d5e6f)`). Without git, or outside a
//! checkout (a source tarball, `cargo install` from a registry), the
//! version says so instead of failing the build.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    let described = match &commit {
        Some(commit) => format!("commit {commit}"),
        None => "commit unknown: built outside a git checkout".to_string(),
    };
    println!("cargo:rustc-env=RELAY_BUILD_COMMIT={described}");
    // Build again when HEAD moves: its file (a branch switch) and the
    // branch's ref (a new commit). Worktrees keep HEAD in their own git
    // directory and refs in the common one.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!(
            "cargo:rerun-if-changed={}",
            Path::new(&git_dir).join("HEAD").display()
        );
    }
    if let (Some(common), Some(branch)) = (
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ) {
        let common = Path::new(&common);
        println!("cargo:rerun-if-changed={}", common.join(&branch).display());
        println!(
            "cargo:rerun-if-changed={}",
            common.join("packed-refs").display()
        );
    }
    println!("cargo:rerun-if-changed=build.rs");
}
