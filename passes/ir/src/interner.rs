//! Sharing equal IR values between the nodes that hold them: the editor's
//! lowering of a large module repeats the same call attributes (every
//! `conv2d` of one configuration, every copy of a model in one file)
//! thousands of times, and one object per call was most of the lowered
//! module's memory.
//!
//! [`Interner::attrs`] returns an earlier attrs object with the same content
//! (type key, field names and values) or keeps the one given. Content is
//! compared exactly: an `IntImm` by value and dtype, a float by its bits (so
//! `-0.0` is not `0.0`, and a NaN is itself). What has an identity the
//! content does not show is never shared: attributes holding an expression
//! or a metadata object are returned unchanged. [`Interner::tensor_type`]
//! does the same for tensor types whose dimensions are integers or `?` (a
//! model's parameters repeat a few annotations thousands of times), and
//! [`Interner::ty`] also for tuples of such types (the result types of
//! calls: every `nn.conv2d` of one configuration computes the same type).
//!
//! Sharing changes one thing TVM shows: which objects are *the same*. An
//! `IntImm` of a shared attrs object or type is one object for every call or
//! variable using it (its [`DimId`](crate::DimId)), and so is the object
//! itself; a printed
//! `#[metadata]` section, which writes an object met twice once, may then
//! share what TVM's parser would have made twice. That is why only the
//! language server's lowering interns (see `relay_lower::IncrementalLowering`);
//! the CLI's lowering makes one object per call, as TVM's parser does.
//!
//! The table is thread-safe (a module's definitions are lowered on rayon's
//! threads) and sharded by hash. It does not keep alive what only it holds:
//! when a shard has doubled since it was last pruned, entries no node uses
//! any more are dropped, so a document edited for hours holds what its
//! current analyses use and at most as much again.

use crate::attrs::{AttrValue, Attrs};
use crate::dtype::DataType;
use crate::fxhash::{FxHasher, FxMap};
use crate::{Dim, TensorType, Type, TypeKind};
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

/// Shares equal attrs objects and tensor types; see the module docs.
#[derive(Default)]
pub struct Interner {
    attrs: Table<Attrs>,
    types: Table<Type>,
}

impl Interner {
    pub fn new() -> Interner {
        Interner::default()
    }

    /// An attrs object equal to `attrs` made earlier, or `attrs` itself
    /// (kept for later calls). Attributes holding an expression or a
    /// metadata object come back unchanged.
    pub fn attrs(&self, attrs: Attrs) -> Attrs {
        let Some(key) = attrs_key(&attrs) else {
            return attrs;
        };
        self.attrs.intern(key, attrs, |a| a.strong_count() == 1)
    }

    /// How many attrs objects the table holds (pruned entries excluded).
    pub fn attrs_len(&self) -> usize {
        self.attrs.len()
    }

    /// A tensor type equal to `ty` made earlier, or `ty` itself (kept for
    /// later calls). Only tensor types whose dimensions are integers or `?`
    /// are shared; any other type comes back unchanged.
    pub fn tensor_type(&self, ty: Type) -> Type {
        let Some(key) = tensor_type_key(&ty) else {
            return ty;
        };
        self.types.intern(key, ty, |t| t.strong_count() == 1)
    }

    /// A type equal to `ty` made earlier, or `ty` (kept for later calls):
    /// [`Interner::tensor_type`] for a tensor type; a tuple whose fields
    /// can all be shared is shared too, and holds the shared fields. Any
    /// other type comes back unchanged.
    pub fn ty(&self, ty: Type) -> Type {
        let TypeKind::Tuple(fields) = ty.kind() else {
            return self.tensor_type(ty);
        };
        let mut key = Key(Vec::with_capacity(8 + 64 * fields.len()));
        if key.ty(&ty).is_none() {
            return ty;
        }
        if let Some(found) = self.types.get(&key.0) {
            return found;
        }
        // Not under the table's lock: a field may live in the same shard.
        let shared: Vec<Type> = fields.iter().map(|f| self.ty(f.clone())).collect();
        let tuple = if shared.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
            ty
        } else {
            Type::tuple(shared)
        };
        self.types.intern(key.0, tuple, |t| t.strong_count() == 1)
    }

    /// How many types the table holds (pruned entries excluded).
    pub fn types_len(&self) -> usize {
        self.types.len()
    }
}

/// A shard prunes first when it reaches this many entries.
const MIN_PRUNE: usize = 64;

const SHARDS: usize = 8;

/// Values by the bytes of their content, in shards.
struct Table<V> {
    shards: [Mutex<Shard<V>>; SHARDS],
}

impl<V> Default for Table<V> {
    fn default() -> Self {
        Table {
            shards: std::array::from_fn(|_| {
                Mutex::new(Shard {
                    map: FxMap::default(),
                    pruned_len: 0,
                })
            }),
        }
    }
}

struct Shard<V> {
    map: FxMap<Box<[u8]>, V>,
    /// The number of entries left by the last pruning.
    pruned_len: usize,
}

impl<V: Clone> Table<V> {
    fn shard(&self, key: &[u8]) -> std::sync::MutexGuard<'_, Shard<V>> {
        let mut hasher = FxHasher::default();
        key.hash(&mut hasher);
        let shard = (hasher.finish() >> 59) as usize % SHARDS;
        self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The value stored under `key`, if any.
    fn get(&self, key: &[u8]) -> Option<V> {
        self.shard(key).map.get(key).cloned()
    }

    /// The value stored under `key`, or `value` stored there. `unused`
    /// says that only the table holds a value.
    fn intern(&self, key: Vec<u8>, value: V, unused: impl Fn(&V) -> bool) -> V {
        let mut shard = self.shard(&key);
        if let Some(found) = shard.map.get(key.as_slice()) {
            return found.clone();
        }
        if shard.map.len() >= (2 * shard.pruned_len).max(MIN_PRUNE) {
            shard.map.retain(|_, v| !unused(v));
            shard.pruned_len = shard.map.len();
        }
        shard.map.insert(key.into_boxed_slice(), value.clone());
        value
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).map.len())
            .sum()
    }
}

/// The bytes of an attrs object's content, or `None` if it holds something
/// with an identity of its own. Every variable-length part is preceded by
/// its length and every value by a tag, so two contents have the same bytes
/// only if they are equal.
fn attrs_key(attrs: &Attrs) -> Option<Vec<u8>> {
    let mut key = Key(Vec::with_capacity(64 + 24 * attrs.fields().len()));
    key.str(attrs.type_key());
    key.len(attrs.fields().len());
    for (name, value) in attrs.fields() {
        key.str(name);
        key.value(value)?;
    }
    Some(key.0)
}

/// The bytes of a tensor type whose dimensions are all integers or `?`.
fn tensor_type_key(ty: &Type) -> Option<Vec<u8>> {
    let TypeKind::Tensor(tensor) = ty.kind() else {
        return None;
    };
    let mut key = Key(Vec::with_capacity(16 + 12 * tensor.shape.len()));
    key.ty(ty)?;
    Some(key.0)
}

struct Key(Vec<u8>);

impl Key {
    fn tag(&mut self, tag: u8) {
        self.0.push(tag);
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    /// Appends a tensor type; `None` for a symbolic dimension.
    fn tensor(&mut self, tensor: &TensorType) -> Option<()> {
        self.dtype(tensor.dtype);
        self.len(tensor.shape.len());
        for dim in &tensor.shape {
            match dim {
                Dim::Int { value, dtype, .. } => {
                    self.tag(0);
                    self.u64(*value as u64);
                    self.dtype(*dtype);
                }
                Dim::Any => self.tag(1),
                Dim::Meta(_) | Dim::Expr(_) => return None,
            }
        }
        Some(())
    }

    /// Appends a tensor type or a tuple of such types (tagged, so a tuple
    /// is never a tensor's key); `None` for anything else.
    fn ty(&mut self, ty: &Type) -> Option<()> {
        match ty.kind() {
            TypeKind::Tensor(tensor) => {
                self.tag(0);
                self.tensor(tensor)
            }
            TypeKind::Tuple(fields) => {
                self.tag(1);
                self.len(fields.len());
                fields.iter().try_for_each(|f| self.ty(f))
            }
            _ => None,
        }
    }

    fn dtype(&mut self, d: DataType) {
        self.0.push(d.code.to_u8());
        self.0.push(d.bits);
        self.0.extend_from_slice(&d.lanes.to_le_bytes());
    }

    /// Appends `value`; `None` for an expression or a metadata object.
    fn value(&mut self, value: &AttrValue) -> Option<()> {
        match value {
            AttrValue::Null => self.tag(0),
            AttrValue::Int(v) => {
                self.tag(1);
                self.u64(*v as u64);
            }
            AttrValue::Double(v) => {
                self.tag(2);
                self.u64(v.to_bits());
            }
            AttrValue::Bool(b) => {
                self.tag(3);
                self.0.push(u8::from(*b));
            }
            AttrValue::Str(s) => {
                self.tag(4);
                self.str(s);
            }
            AttrValue::DataType(d) => {
                self.tag(5);
                self.dtype(*d);
            }
            AttrValue::IntImm { value, dtype, .. } => {
                self.tag(6);
                self.u64(*value as u64);
                self.dtype(*dtype);
            }
            AttrValue::FloatImm { value, dtype } => {
                self.tag(7);
                self.u64(value.to_bits());
                self.dtype(*dtype);
            }
            AttrValue::Array(items) => {
                self.tag(8);
                self.len(items.len());
                for item in items {
                    self.value(item)?;
                }
            }
            AttrValue::Map(entries) => {
                self.tag(9);
                self.len(entries.len());
                for (k, v) in entries {
                    self.str(k);
                    self.value(v)?;
                }
            }
            AttrValue::Any => self.tag(10),
            AttrValue::Expr(_) | AttrValue::Meta(_) => return None,
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;

    fn conv(strides: Vec<AttrValue>, groups: i64) -> Attrs {
        Attrs::new(
            "relay.attrs.Conv2DAttrs",
            vec![
                ("strides".to_string(), AttrValue::Array(strides)),
                ("groups".to_string(), AttrValue::Int(groups)),
            ],
        )
    }

    fn ints(values: &[i64]) -> Vec<AttrValue> {
        values
            .iter()
            .map(|&v| AttrValue::int_imm(v, DataType::INT64))
            .collect()
    }

    fn one(name: &str, value: AttrValue) -> Attrs {
        Attrs::new("relay.attrs.TestAttrs", vec![(name.to_string(), value)])
    }

    #[test]
    fn equal_content_is_one_object() {
        let interner = Interner::new();
        let first = interner.attrs(conv(ints(&[2, 2]), 1));
        // Other IntImm objects, the same values.
        let second = interner.attrs(conv(ints(&[2, 2]), 1));
        assert!(first.ptr_eq(&second));
        let other = interner.attrs(conv(ints(&[1, 1]), 1));
        assert!(!other.ptr_eq(&first));
        let other_groups = interner.attrs(conv(ints(&[2, 2]), 2));
        assert!(!other_groups.ptr_eq(&first));
        assert_eq!(interner.attrs_len(), 3);
    }

    #[test]
    fn a_different_type_key_or_field_name_is_another_object() {
        let interner = Interner::new();
        let a = interner.attrs(one("axis", AttrValue::Int(1)));
        let b = interner.attrs(one("axes", AttrValue::Int(1)));
        let c = interner.attrs(Attrs::new(
            "relay.attrs.OtherAttrs",
            vec![("axis".to_string(), AttrValue::Int(1))],
        ));
        assert!(!a.ptr_eq(&b) && !a.ptr_eq(&c) && !b.ptr_eq(&c));
    }

    #[test]
    fn dtypes_and_float_bits_are_content() {
        let interner = Interner::new();
        let i32 = interner.attrs(one("v", AttrValue::int_imm(3, DataType::INT32)));
        let i64 = interner.attrs(one("v", AttrValue::int_imm(3, DataType::INT64)));
        assert!(!i32.ptr_eq(&i64));
        let float = |value: f64| AttrValue::FloatImm {
            value,
            dtype: DataType::FLOAT32,
        };
        let zero = interner.attrs(one("v", float(0.0)));
        let negative_zero = interner.attrs(one("v", float(-0.0)));
        assert!(!zero.ptr_eq(&negative_zero));
        assert!(zero.ptr_eq(&interner.attrs(one("v", float(0.0)))));
        let nan = interner.attrs(one("v", AttrValue::Double(f64::NAN)));
        assert!(nan.ptr_eq(&interner.attrs(one("v", AttrValue::Double(f64::NAN)))));
        // An int and an IntImm of one value print differently.
        let int = interner.attrs(one("v", AttrValue::Int(3)));
        assert!(!int.ptr_eq(&i32));
    }

    #[test]
    fn attrs_with_expressions_are_not_shared() {
        let interner = Interner::new();
        let constant =
            || AttrValue::Expr(build::scalar_constant(DataType::FLOAT32, 1.0).expect("a float32"));
        let a = interner.attrs(one("value", constant()));
        let b = interner.attrs(one("value", constant()));
        assert!(!a.ptr_eq(&b));
        let nested = || AttrValue::Array(vec![AttrValue::Int(1), constant()]);
        let c = interner.attrs(one("value", nested()));
        let d = interner.attrs(one("value", nested()));
        assert!(!c.ptr_eq(&d));
        assert_eq!(interner.attrs_len(), 0);
    }

    #[test]
    fn pruning_drops_what_only_the_table_holds() {
        let interner = Interner::new();
        let kept: Vec<Attrs> = (0..8)
            .map(|i| interner.attrs(one("v", AttrValue::Int(i))))
            .collect();
        // Many objects nobody keeps: the table does not grow with them.
        for i in 100..100_000 {
            let _ = interner.attrs(one("v", AttrValue::Int(i)));
        }
        assert!(
            interner.attrs_len() <= kept.len() + SHARDS * 2 * MIN_PRUNE,
            "{} entries left",
            interner.attrs_len()
        );
        // What is still used is still shared.
        for (i, attrs) in kept.iter().enumerate() {
            let again = interner.attrs(one("v", AttrValue::Int(i as i64)));
            assert!(again.ptr_eq(attrs));
        }
    }

    #[test]
    fn equal_tensor_types_are_one_object() {
        let interner = Interner::new();
        let ty = |dims: &[i64], dtype: DataType| {
            Type::tensor(
                dims.iter().map(|&d| Dim::int(d, DataType::INT32)).collect(),
                dtype,
            )
        };
        let a = interner.tensor_type(ty(&[64, 3, 7, 7], DataType::FLOAT32));
        let b = interner.tensor_type(ty(&[64, 3, 7, 7], DataType::FLOAT32));
        assert!(a.ptr_eq(&b));
        assert!(!a.ptr_eq(&interner.tensor_type(ty(&[64, 3, 7, 7], DataType::float(16)))));
        assert!(!a.ptr_eq(&interner.tensor_type(ty(&[64, 3, 7], DataType::FLOAT32))));
        let int64_dim = Type::tensor(
            vec![Dim::int64(64), Dim::int32(3), Dim::int32(7), Dim::int32(7)],
            DataType::FLOAT32,
        );
        assert!(!a.ptr_eq(&interner.tensor_type(int64_dim)));
        let any = || Type::tensor(vec![Dim::Any, Dim::int32(3)], DataType::FLOAT32);
        assert!(interner
            .tensor_type(any())
            .ptr_eq(&interner.tensor_type(any())));
        // Not a tensor type: never shared.
        let tuple = || Type::tuple(vec![ty(&[1], DataType::FLOAT32)]);
        assert!(!interner
            .tensor_type(tuple())
            .ptr_eq(&interner.tensor_type(tuple())));
    }

    #[test]
    fn equal_tuples_of_tensor_types_are_one_object_holding_shared_fields() {
        let interner = Interner::new();
        let tensor = |c: i64| Type::tensor(vec![Dim::int32(1), Dim::int32(c)], DataType::FLOAT32);
        let tuple = |cs: &[i64]| Type::tuple(cs.iter().map(|&c| tensor(c)).collect());
        let a = interner.ty(tuple(&[64, 64, 64]));
        let b = interner.ty(tuple(&[64, 64, 64]));
        assert!(a.ptr_eq(&b));
        // Its fields are the shared tensor types.
        let field = interner.ty(tensor(64));
        let TypeKind::Tuple(fields) = a.kind() else {
            panic!("a tuple");
        };
        assert!(fields.iter().all(|f| f.ptr_eq(&field)));
        assert!(!a.ptr_eq(&interner.ty(tuple(&[64, 64, 32]))));
        assert!(!a.ptr_eq(&interner.ty(tuple(&[64, 64]))));
        // Nested tuples, and a tuple is never the tensor of the same bytes.
        let nested = || Type::tuple(vec![tuple(&[8]), tensor(8)]);
        assert!(interner.ty(nested()).ptr_eq(&interner.ty(nested())));
        assert!(!interner.ty(tuple(&[8])).ptr_eq(&interner.ty(tensor(8))));
        assert!(interner.ty(Type::unit()).ptr_eq(&interner.ty(Type::unit())));
    }

    #[test]
    fn tuples_holding_other_types_are_not_shared() {
        let interner = Interner::new();
        let func = || {
            let t = Type::tensor(vec![Dim::int32(2)], DataType::FLOAT32);
            Type::tuple(vec![t.clone(), Type::func(vec![t.clone()], t, vec![])])
        };
        assert!(!interner.ty(func()).ptr_eq(&interner.ty(func())));
        let symbolic = || {
            Type::tuple(vec![Type::tensor(
                vec![Dim::Any, Dim::int32(2)],
                DataType::FLOAT32,
            )])
        };
        // `?` is content; a function type is not.
        assert!(interner.ty(symbolic()).ptr_eq(&interner.ty(symbolic())));
        assert_eq!(interner.types_len(), 2, "the `?` tuple and its field");
    }
}
