//! Reading a pipeline the way a project sees it: the name of a `relay.toml`
//! pipeline may stand anywhere a pass may (`-p "CountCalls, cleanup"`,
//! `Sequential(cleanup, FuseOps)`), and is replaced by that pipeline's
//! passes. A registered pass of the same name wins, as it always has.
//!
//! Errors keep pointing into the text the user wrote: a problem inside a
//! named pipeline is reported at the name that brought it in, and a
//! pipeline that names itself (directly or through others) is refused.

use super::Project;
use relay_passes::pass_manager::pipeline::{
    Pipeline, PipelineError, PipelineItem, MAX_PIPELINE_DEPTH,
};
use relay_passes::pass_manager::{parse_pipeline, registry};
use std::ops::Range;

/// Reads `text`, replacing the names of `project`'s pipelines by their
/// passes (nothing to replace without a project).
pub fn read_pipeline(project: Option<&Project>, text: &str) -> Result<Pipeline, PipelineError> {
    let pipeline = parse_pipeline(text)?;
    let Some(project) = project else {
        return Ok(pipeline);
    };
    let mut using = Vec::new();
    let items = project.expand_items(pipeline.items, 0, &mut using, None)?;
    Ok(Pipeline { items })
}

impl Project {
    /// The items with every pipeline name replaced by its passes. `depth`
    /// is how many `Sequential(` enclose them; `using` the names being
    /// expanded (to refuse cycles); `at` the range in the user's text all
    /// items are reported at once they come from a named pipeline.
    fn expand_items(
        &self,
        items: Vec<PipelineItem>,
        depth: usize,
        using: &mut Vec<String>,
        at: Option<&Range<usize>>,
    ) -> Result<Vec<PipelineItem>, PipelineError> {
        let mut out = Vec::with_capacity(items.len());
        for mut item in items {
            if let Some(range) = at {
                item.range = range.clone();
                item.arg_ranges = vec![range.clone(); item.arg_ranges.len()];
            }
            if !self.names_pipeline(&item) {
                let nested = std::mem::take(&mut item.passes);
                item.passes = self.expand_items(nested, depth + 1, using, at)?;
                out.push(item);
                continue;
            }
            let reference = item.range.clone();
            if let Some(start) = using.iter().position(|n| *n == item.name) {
                let mut cycle = using[start..].to_vec();
                cycle.push(item.name.clone());
                return Err(PipelineError::new(
                    format!(
                        "the pipelines of relay.toml use each other in a cycle: {}",
                        cycle.join(" > ")
                    ),
                    reference,
                ));
            }
            let text = &self.pipelines[&item.name];
            let inner = parse_pipeline(text).map_err(|e| {
                PipelineError::new(
                    format!(
                        "pipeline `{}` of relay.toml: {} (at `{}`)",
                        item.name,
                        e.message,
                        text.get(e.range.clone()).unwrap_or_default()
                    ),
                    reference.clone(),
                )
            })?;
            if depth + inner.depth() > MAX_PIPELINE_DEPTH {
                return Err(PipelineError::new(
                    format!(
                        "pipeline `{}` of relay.toml nests deeper than {MAX_PIPELINE_DEPTH} levels here",
                        item.name
                    ),
                    reference,
                ));
            }
            using.push(item.name.clone());
            let expanded = self.expand_items(inner.items, depth, using, Some(&reference))?;
            using.pop();
            out.extend(expanded);
        }
        Ok(out)
    }

    /// Whether `item` is a bare name of one of the project's pipelines
    /// (and not of a registered pass, which takes precedence).
    fn names_pipeline(&self, item: &PipelineItem) -> bool {
        item.args.is_empty()
            && item.passes.is_empty()
            && self.pipelines.contains_key(&item.name)
            && registry::lookup(&item.name).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn project(pipelines: &[(&str, &str)]) -> Project {
        let mut text = String::from("[pipelines]\n");
        for (name, pipeline) in pipelines {
            text.push_str(&format!("{name} = {pipeline:?}\n"));
        }
        Project::parse(&text, PathBuf::from("/p")).unwrap()
    }

    #[test]
    fn a_named_pipeline_stands_where_a_pass_may() {
        let p = project(&[("cleanup", "FoldConstant, DeadCodeElimination")]);
        let read = read_pipeline(Some(&p), "InferType, cleanup").unwrap();
        assert_eq!(
            read.to_string(),
            "InferType, FoldConstant, DeadCodeElimination"
        );
        let nested = read_pipeline(Some(&p), "Sequential(cleanup, opt_level=1)").unwrap();
        assert_eq!(
            nested.to_string(),
            "Sequential(FoldConstant, DeadCodeElimination, opt_level=1)"
        );
        // Without a project the name is left for the registry to refuse.
        assert_eq!(
            read_pipeline(None, "cleanup").unwrap().to_string(),
            "cleanup"
        );
    }

    #[test]
    fn errors_point_at_the_name_in_the_users_text() {
        let p = project(&[("a", "b"), ("b", "InferType, a"), ("bad", "FuseOps(")]);
        let text = "InferType, a";
        let cycle = read_pipeline(Some(&p), text).unwrap_err();
        assert_eq!(
            cycle.message,
            "the pipelines of relay.toml use each other in a cycle: a > b > a"
        );
        assert_eq!(&text[cycle.range], "a");
        let text = "FoldConstant, bad";
        let bad = read_pipeline(Some(&p), text).unwrap_err();
        assert!(bad
            .message
            .starts_with("pipeline `bad` of relay.toml: expected"));
        assert_eq!(&text[bad.range], "bad");
    }
}
