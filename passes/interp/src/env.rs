//! Frames: one per function activation, holding the activation's variable
//! bindings and the values of the expressions already evaluated in it.
//!
//! A frame's parent is the frame its function was created in (lexical
//! scoping, as TVM's interpreter captures a closure's environment), so a
//! lookup walks as many frames as functions are nested in the text, not as
//! many as calls are active. Every variable is bound at one site (a `let`,
//! a parameter, a pattern), and that site is bound at most once per
//! activation, so one map per frame keyed by the variable's identity is
//! enough.
//!
//! The memo makes a graph binding used several times (one node, several
//! parents) evaluate once per activation, as the dataflow graph means. It is
//! looked up through the parents too: a node evaluated in an enclosing
//! activation only read variables bound there, which an inner activation
//! sees unchanged.

use crate::value::Value;
use relay_ir::VarId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct Frame {
    parent: Option<Arc<Frame>>,
    slots: Mutex<Slots>,
}

#[derive(Default)]
struct Slots {
    vars: HashMap<VarId, Value>,
    memo: HashMap<usize, Value>,
}

impl Frame {
    pub fn new(parent: Option<Arc<Frame>>) -> Arc<Frame> {
        Arc::new(Frame {
            parent,
            slots: Mutex::default(),
        })
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn bind(&self, var: VarId, value: Value) {
        self.slots().vars.insert(var, value);
    }

    pub fn lookup(&self, var: VarId) -> Option<Value> {
        let mut frame = self;
        loop {
            if let Some(v) = frame.slots().vars.get(&var) {
                return Some(v.clone());
            }
            frame = frame.parent.as_deref()?;
        }
    }

    /// Drops the activation's bindings and remembered values, once no
    /// closure created in it can outlive it (see
    /// `Interpreter::invoke`). A closure made here holds this frame as its
    /// environment, and the frame holds the closure (a `let`-bound
    /// function, a remembered `fn` node): without this, that cycle keeps
    /// every value of the activation alive after it returned — gigabytes
    /// per run of a fused model, added up over the semantic check's runs.
    pub fn release(&self) {
        let slots = std::mem::take(&mut *self.slots());
        // Dropped here, after the lock: a value's drop may drop a closure
        // whose environment is this frame.
        drop(slots);
    }

    pub fn remember(&self, node: usize, value: Value) {
        self.slots().memo.insert(node, value);
    }

    pub fn recall(&self, node: usize) -> Option<Value> {
        let mut frame = self;
        loop {
            if let Some(v) = frame.slots().memo.get(&node) {
                return Some(v.clone());
            }
            frame = frame.parent.as_deref()?;
        }
    }
}
