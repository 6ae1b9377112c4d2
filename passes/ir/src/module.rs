//! The IRModule: global functions and type definitions by name, and the
//! sources their spans point into.

use crate::source::SourceMap;
use crate::{Constructor, Function, GlobalTypeVar, TypeData};
use std::collections::{BTreeMap, BTreeSet};

/// A property of a module that a pass establishes and later passes may rely
/// on. Any change to the module's items clears every property, so a
/// property that is present still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ModuleProperty {
    /// Every function has checked types (what InferType establishes).
    TypeChecked,
}

/// A module. Items are kept sorted by name, the order TVM prints them in.
#[derive(Debug, Clone, Default)]
pub struct IRModule {
    functions: BTreeMap<String, Function>,
    type_definitions: BTreeMap<String, TypeData>,
    /// The texts the module's spans point into.
    pub sources: SourceMap,
    properties: BTreeSet<ModuleProperty>,
}

impl IRModule {
    pub fn new() -> IRModule {
        IRModule::default()
    }

    /// Adds or replaces a global function. Replacing a function by itself
    /// (the same node) is not a change.
    pub fn add_function(&mut self, name: &str, function: Function) {
        if let Some(old) = self.functions.get(name) {
            if old.expr().ptr_eq(function.expr()) {
                return;
            }
        }
        self.properties.clear();
        self.functions.insert(name.to_string(), function);
    }

    pub fn remove_function(&mut self, name: &str) -> Option<Function> {
        self.properties.clear();
        self.functions.remove(name)
    }

    /// Whether a property established earlier still holds.
    pub fn has_property(&self, property: ModuleProperty) -> bool {
        self.properties.contains(&property)
    }

    /// Records that a property holds (by the pass that established it).
    pub fn set_property(&mut self, property: ModuleProperty) {
        self.properties.insert(property);
    }

    /// A structural hash of the whole module (free variables by name).
    pub fn structural_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (name, function) in &self.functions {
            name.hash(&mut h);
            crate::equal::structural_hash(function.expr(), true).hash(&mut h);
        }
        for name in self.type_definitions.keys() {
            name.hash(&mut h);
        }
        h.finish()
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.get(name)
    }

    /// Global functions, sorted by name.
    pub fn functions(&self) -> impl Iterator<Item = (&str, &Function)> {
        self.functions.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    /// Adds or replaces a type definition.
    pub fn add_type_definition(&mut self, data: TypeData) {
        self.properties.clear();
        self.type_definitions
            .insert(data.header.name().to_string(), data);
    }

    pub fn type_definition(&self, name: &str) -> Option<&TypeData> {
        self.type_definitions.get(name)
    }

    /// Type definitions, sorted by name.
    pub fn type_definitions(&self) -> impl Iterator<Item = (&str, &TypeData)> {
        self.type_definitions.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The constructor of any type definition with this name.
    pub fn constructor(&self, name: &str) -> Option<&Constructor> {
        self.type_definitions
            .values()
            .flat_map(|data| data.constructors.iter())
            .find(|ctor| ctor.name() == name)
    }

    pub fn global_type_var(&self, name: &str) -> Option<&GlobalTypeVar> {
        self.type_definitions.get(name).map(|data| &data.header)
    }
}
