//! The request and notification handlers, one file per family, each thin:
//! take the parameters apart (`from_proto`), run the feature on the
//! document's analysis off the main loop (`Backend::with_analysis`), and
//! convert the answer (`to_proto`). Which method reaches which handler is
//! `router.rs`.

pub mod code_actions;
pub mod commands;
pub mod completion;
pub mod documents;
pub mod formatting;
pub mod graph;
pub mod hover;
pub mod inlay_hints;
pub mod lifecycle;
pub mod navigation;
pub mod outline;
pub mod rename;
pub mod run;
pub mod semantic_tokens;
