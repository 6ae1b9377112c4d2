//! Frontend names (`%conv1.weight`, `%input_tensor:0`, `%1_bn.gamma`,
//! `@head.relu`) renamed, at every occurrence, to the names the reparseable
//! printer writes for them (`%conv1_weight`, `%input_tensor_0`,
//! `%v1_bn_gamma`, `@head_relu`).

use super::edits::Edits;
use super::Refusal;
use relay_ir::printer::{reparseable_global_name, reparseable_local_name};
use relay_syntax::{Leniency, LeniencyKind, SyntaxKind, SyntaxNode};
use std::collections::{HashMap, HashSet};

/// Renames every name a [`LeniencyKind::FrontendName`] reports. A new name
/// the text already uses (or two names that would become one) is refused:
/// renaming would merge two variables.
pub(super) fn rename_frontend_names(
    root: &SyntaxNode,
    leniencies: &[Leniency],
    edits: &mut Edits,
) -> Result<(), Refusal> {
    let names: Vec<&Leniency> = leniencies
        .iter()
        .filter(|l| l.kind == LeniencyKind::FrontendName)
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let tokens: Vec<_> = root
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| matches!(t.kind(), SyntaxKind::LOCAL | SyntaxKind::GLOBAL))
        .collect();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for leniency in &names {
        let Some(token) = tokens
            .iter()
            .find(|t| t.text_range().contains_range(leniency.range))
        else {
            continue;
        };
        let old = token.text();
        let new = match old.split_at(1) {
            ("%", hint) => format!("%{}", reparseable_local_name(hint)),
            ("@", name) => format!("@{}", reparseable_global_name(name)),
            _ => continue,
        };
        renamed.insert(old.to_string(), new);
    }
    let kept: HashSet<&str> = tokens
        .iter()
        .map(|t| t.text())
        .filter(|t| !renamed.contains_key(*t))
        .collect();
    let mut taken: HashMap<&str, &str> = HashMap::new();
    for leniency in names {
        let Some(token) = tokens
            .iter()
            .find(|t| t.text_range().contains_range(leniency.range))
        else {
            continue;
        };
        let old = token.text();
        let Some(new) = renamed.get(old) else {
            continue;
        };
        let clash = if kept.contains(new.as_str()) {
            Some(format!("the file already uses `{new}`"))
        } else {
            taken
                .insert(new.as_str(), old)
                .filter(|other| *other != old)
                .map(|other| format!("`{other}` would become `{new}` too"))
        };
        if let Some(clash) = clash {
            return Err(Refusal::new(
                leniency.range,
                format!(
                    "`{old}` would be renamed `{new}` for TVM's parser, but {clash}; rename \
                     one of them by hand and upgrade again"
                ),
            ));
        }
    }
    for token in &tokens {
        if let Some(new) = renamed.get(token.text()) {
            edits.replace(token.text_range(), new.clone());
        }
    }
    Ok(())
}
