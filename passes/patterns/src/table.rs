//! Composite pattern tables, MergeComposite's input: named patterns in
//! order, each with an optional check. TVM's check is a Python function of
//! the matched root; here it is a pattern the root must also match (with
//! the attributes, dtypes and shapes it constrains).
//!
//! Tables are registered by name (from `relay.toml`'s `[composite.<name>]`
//! tables, or by an embedding program) and looked up by
//! `MergeComposite(pattern_table="<name>")`.

use crate::matcher::matches;
use crate::pattern::Pattern;
use crate::text::{parse_pattern, NamedPatterns, PatternError};
use relay_ir::Expr;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

/// One entry of a table.
#[derive(Debug, Clone)]
pub struct CompositePattern {
    /// The `Composite` attribute given to the functions made.
    pub name: String,
    pub pattern: Pattern,
    /// A pattern the matched root must match too.
    pub check: Option<Pattern>,
}

impl CompositePattern {
    /// Reads an entry from its pattern (and check) text.
    pub fn parse(
        name: &str,
        pattern: &str,
        check: Option<&str>,
        named: NamedPatterns<'_>,
    ) -> Result<CompositePattern, (String, PatternError)> {
        let parsed = parse_pattern(pattern, named).map_err(|e| (pattern.to_string(), e))?;
        let check = match check {
            Some(text) => Some(
                parse_pattern(text, named)
                    .map_err(|e| (text.to_string(), e))?
                    .pattern,
            ),
            None => None,
        };
        Ok(CompositePattern {
            name: name.to_string(),
            pattern: parsed.pattern,
            check,
        })
    }

    /// Whether MergeComposite may make a function of a match at `root`.
    pub fn check(&self, root: &Expr) -> bool {
        self.check.as_ref().is_none_or(|c| matches(c, root))
    }
}

/// A pattern table, in priority order.
pub type PatternTable = Vec<CompositePattern>;

fn registry() -> &'static RwLock<BTreeMap<String, Arc<PatternTable>>> {
    static TABLES: OnceLock<RwLock<BTreeMap<String, Arc<PatternTable>>>> = OnceLock::new();
    TABLES.get_or_init(Default::default)
}

/// Registers (or replaces) the table `name`.
pub fn register_table(name: &str, table: PatternTable) {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string(), Arc::new(table));
}

/// The table registered as `name`.
pub fn table(name: &str) -> Option<Arc<PatternTable>> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(name)
        .cloned()
}

/// The names of the registered tables.
pub fn table_names() -> Vec<String> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect()
}
