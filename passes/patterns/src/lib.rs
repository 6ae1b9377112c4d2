//! `relay-patterns`: TVM v0.13's dataflow pattern language
//! (`tvm.relay.dataflow_pattern`) over the IR of `relay-ir`.
//!
//! * [`pattern`]: the pattern nodes and TVM's constructors (`wildcard()`,
//!   `is_op(…)`, `p.has_attr(…)`, `dominates(…)`, …);
//! * [`matcher`]: `match`, with TVM's memo of shared sub-patterns,
//!   commutative and associative call matching and dominator patterns
//!   (over the dataflow graph and post-dominator tree of [`graph`]);
//! * [`group`], [`rewrite`](mod@rewrite): the non-overlapping grouping of matches, then
//!   `rewrite` with callbacks (`require_type`, `rewrite_once`) and
//!   `partition` (with attributes and a check);
//! * [`text`]: a text syntax for patterns, [`rule`]: rewrite rules
//!   (`pattern => replacement`) and [`table`]: composite pattern tables
//!   (MergeComposite's input), readable from `relay.toml`; [`targets`]: the
//!   operators each BYOC target supports (AnnotateTarget's input).
//!
//! Architecture invariant: this crate knows no pass and no application; it
//! builds on `relay-ir` (with `relay-lower` to read embedded Relay text and
//! `relay-infer` for the types that type patterns and `require_type` need).

pub mod find;
pub mod graph;
pub mod group;
pub mod matcher;
pub mod pattern;
pub mod rewrite;
pub mod rule;
pub mod table;
pub mod targets;
pub mod text;

pub use matcher::{matches, Matcher, NodeMap};
pub use pattern::{Pattern, PatternKind, ShapeDim};
pub use rewrite::{partition, rewrite, Callback};
