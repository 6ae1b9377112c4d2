//! The contract between the type solver and operator type relations.
//!
//! A relation is TVM's `TypeRelation` as a pure function: it sees the current
//! (resolved) types of an operator call's inputs and output, and the call's
//! attributes, and either waits (some input is not known well enough yet),
//! or says which types to unify with which slots (the output, and sometimes
//! inputs such as a convolution's weight whose shape follows from the
//! attributes), or reports an error in TVM's words.
//!
//! Relations are looked up by the name recorded in the operator's table
//! entry (`OpDef::type_rel`, e.g. `Conv2D`); see `relations::by_name`.

use relay_ir::{Attrs, Type};

/// What a relation is called with: the types of its slots, as currently
/// resolved (each may still be incomplete), the inputs first and the
/// output last, and the call's attributes.
#[derive(Debug, Clone, Copy)]
pub struct RelationArgs<'a> {
    types: &'a [Type],
    /// The call's attributes (with every field of the schema), if any.
    pub attrs: Option<&'a Attrs>,
}

impl<'a> RelationArgs<'a> {
    /// `types` holds the inputs then the output (so it is never empty).
    pub fn new(types: &'a [Type], attrs: Option<&'a Attrs>) -> RelationArgs<'a> {
        assert!(!types.is_empty(), "a relation has at least an output");
        RelationArgs { types, attrs }
    }

    /// Every slot: the inputs, then the output.
    pub fn types(&self) -> &'a [Type] {
        self.types
    }

    /// The inputs' types.
    pub fn inputs(&self) -> &'a [Type] {
        &self.types[..self.types.len() - 1]
    }

    /// The output's type (often incomplete).
    pub fn output(&self) -> &'a Type {
        &self.types[self.types.len() - 1]
    }
}

/// What a relation concludes.
#[derive(Debug, Clone)]
pub enum RelationOutcome {
    /// Not enough is known yet; the solver calls again when a type changes.
    NotReady,
    /// Done: unify each slot with its type. Slot `i < inputs.len()` is input
    /// `i`; slot `inputs.len()` is the output.
    Solved(Vec<(usize, Type)>),
    /// Not done, but these slots are unified now: TVM's `Assign` takes
    /// effect at once even when the relation then returns `false`
    /// (`BroadCastToRel` assigns the attribute's shape and then checks the
    /// broadcast on its argument array, where the output is still
    /// incomplete). As with `NotReady`, the relation runs again only when
    /// one of its types is changed by something else.
    Pending(Vec<(usize, Type)>),
}

/// A type error found by a relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationError {
    /// The message, in TVM's words where TVM has them.
    pub message: String,
    /// The input the error is about, if one is (for a note at its span).
    pub input: Option<usize>,
    /// The call attribute the error is about, if one is: the error is
    /// reported at that attribute's value in the call's text.
    pub attribute: Option<&'static str>,
}

impl RelationError {
    pub fn new(message: impl Into<String>) -> RelationError {
        RelationError {
            message: message.into(),
            input: None,
            attribute: None,
        }
    }

    pub fn at_input(message: impl Into<String>, input: usize) -> RelationError {
        RelationError {
            message: message.into(),
            input: Some(input),
            attribute: None,
        }
    }

    /// The same error, about the call attribute `name` (unless it already
    /// names one: the innermost check knows best).
    pub fn about_attribute(mut self, name: &'static str) -> RelationError {
        self.attribute.get_or_insert(name);
        self
    }
}

/// A type relation.
pub type RelationFn = fn(&RelationArgs<'_>) -> Result<RelationOutcome, RelationError>;

impl RelationOutcome {
    /// Solved by giving the output this type.
    pub fn output(args: &RelationArgs<'_>, ty: Type) -> RelationOutcome {
        RelationOutcome::Solved(vec![(args.inputs().len(), ty)])
    }
}
