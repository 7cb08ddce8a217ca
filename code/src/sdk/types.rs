//! The TypeScript types a schema maps to: [`Ty`], a small syntax tree,
//! with constructors that keep unions and intersections flat and
//! simplified, and the walk over the references a type makes *at once*
//! (outside any object, array or tuple), which decides whether a named
//! type may refer to itself.

use std::collections::{HashMap, HashSet};

use super::doc::Doc;

/// A TypeScript type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    /// `unknown`.
    Unknown,
    /// `never`.
    Never,
    /// `undefined` (only in index signatures beside optional properties).
    Undefined,
    /// `string`.
    String,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `null`.
    Null,
    /// A literal type, already written: `"low"`, `3`, `true`.
    Literal(String),
    /// A named type of the same scope, by index.
    Ref(usize),
    /// `T[]`.
    Array(Box<Ty>),
    /// `[A, B?, ...C[]]`.
    Tuple(Tuple),
    /// `{ a: A; b?: B; [key: string]: C }`.
    Object(Object),
    /// `A | B`, each member with the JSDoc of its schema.
    Union(Vec<Member>),
    /// `A & B`.
    Intersection(Vec<Ty>),
}

/// A tuple type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Tuple {
    /// The elements, in order.
    pub(crate) elements: Vec<Ty>,
    /// How many leading elements are required; the rest are optional.
    pub(crate) required: usize,
    /// The type of further elements, when there may be any.
    pub(crate) rest: Option<Box<Ty>>,
}

/// An object type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Object {
    /// The declared properties, in the schema's order.
    pub(crate) props: Vec<Prop>,
    /// The index signature's value type, `[key: string]: T`.
    pub(crate) index: Option<Box<Ty>>,
}

/// One property of an object type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Prop {
    /// The property's name, unquoted.
    pub(crate) name: String,
    /// Whether it may be absent (`?:`).
    pub(crate) optional: bool,
    /// Its type.
    pub(crate) ty: Ty,
    /// Its JSDoc.
    pub(crate) doc: Doc,
}

/// One member of a union.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Member {
    /// Its type.
    pub(crate) ty: Ty,
    /// The JSDoc written before it when the union is laid out one member a line.
    pub(crate) doc: Doc,
}

impl Ty {
    /// `{}`.
    pub(crate) fn empty_object() -> Ty {
        Ty::Object(Object::default())
    }

    /// The union of `members`: nested unions flattened, `never` dropped,
    /// repeats dropped (keeping the first JSDoc found), `unknown` if any
    /// member is, `never` if none is left, the one member if one is left.
    pub(crate) fn union(members: Vec<Member>) -> Ty {
        let mut flat: Vec<Member> = Vec::new();
        let mut seen: HashMap<Ty, usize> = HashMap::new();
        let mut stack: Vec<Member> = members.into_iter().rev().collect();
        while let Some(member) = stack.pop() {
            match member.ty {
                Ty::Union(inner) => stack.extend(inner.into_iter().rev()),
                Ty::Never => {}
                Ty::Unknown => return Ty::Unknown,
                ty => match seen.get(&ty) {
                    Some(&i) => {
                        if flat[i].doc.is_empty() {
                            flat[i].doc = member.doc;
                        }
                    }
                    None => {
                        seen.insert(ty.clone(), flat.len());
                        flat.push(Member {
                            ty,
                            doc: member.doc,
                        });
                    }
                },
            }
        }
        match flat.len() {
            0 => Ty::Never,
            1 => flat.pop().map_or(Ty::Never, |m| m.ty),
            _ => Ty::Union(flat),
        }
    }

    /// The union of `tys`, none with a JSDoc.
    pub(crate) fn union_of(tys: Vec<Ty>) -> Ty {
        Ty::union(
            tys.into_iter()
                .map(|ty| Member {
                    ty,
                    doc: Doc::default(),
                })
                .collect(),
        )
    }

    /// The intersection of `parts`: nested intersections flattened,
    /// `unknown` and repeats dropped, plain objects (no index signature)
    /// merged into one, `{}` dropped beside other parts, `never` if any part
    /// is, `unknown` if none is left, the one part if one is left.
    pub(crate) fn intersection(parts: Vec<Ty>) -> Ty {
        let mut flat: Vec<Ty> = Vec::new();
        let mut seen: HashSet<Ty> = HashSet::new();
        let mut stack: Vec<Ty> = parts.into_iter().rev().collect();
        while let Some(part) = stack.pop() {
            match part {
                Ty::Intersection(inner) => stack.extend(inner.into_iter().rev()),
                Ty::Unknown => {}
                Ty::Never => return Ty::Never,
                ty => {
                    if seen.insert(ty.clone()) {
                        flat.push(ty);
                    }
                }
            }
        }
        // Merge the plain objects into the first one, in place.
        let mut merged: Vec<Ty> = Vec::new();
        let mut first_plain: Option<usize> = None;
        for ty in flat {
            match ty {
                Ty::Object(o) if o.index.is_none() => match first_plain {
                    Some(i) => {
                        if let Ty::Object(target) = &mut merged[i] {
                            merge_props(target, o.props);
                        }
                    }
                    None => {
                        first_plain = Some(merged.len());
                        merged.push(Ty::Object(o));
                    }
                },
                ty => merged.push(ty),
            }
        }
        if merged.len() > 1 {
            merged
                .retain(|t| !matches!(t, Ty::Object(o) if o.props.is_empty() && o.index.is_none()));
            if merged.is_empty() {
                return Ty::empty_object();
            }
        }
        match merged.len() {
            0 => Ty::Unknown,
            1 => merged.pop().unwrap_or(Ty::Unknown),
            _ => Ty::Intersection(merged),
        }
    }

    /// Whether the type is short to write and carries no JSDoc: keywords,
    /// literals, references, and arrays, tuples and unions of those.
    pub(crate) fn is_simple(&self) -> bool {
        match self {
            Ty::Array(el) => el.is_simple(),
            Ty::Tuple(t) => {
                t.elements.iter().all(Ty::is_simple) && t.rest.as_deref().is_none_or(Ty::is_simple)
            }
            Ty::Union(members) => members.iter().all(|m| m.doc.is_empty() && m.ty.is_simple()),
            Ty::Object(_) | Ty::Intersection(_) => false,
            _ => true,
        }
    }

    /// Calls `f` on each named type this one refers to at once: itself,
    /// or through unions and intersections, but not inside an object,
    /// array or tuple (TypeScript defers those, so they may recurse).
    pub(crate) fn immediate_refs(&self, f: &mut impl FnMut(usize)) {
        match self {
            Ty::Ref(id) => f(*id),
            Ty::Union(members) => members.iter().for_each(|m| m.ty.immediate_refs(f)),
            Ty::Intersection(parts) => parts.iter().for_each(|p| p.immediate_refs(f)),
            _ => {}
        }
    }

    /// The type with each reference made at once to a named type for
    /// which `cut` holds replaced by `unknown`, simplified again.
    pub(crate) fn cut_immediate_refs(self, cut: &impl Fn(usize) -> bool) -> Ty {
        match self {
            Ty::Ref(id) if cut(id) => Ty::Unknown,
            Ty::Union(members) => Ty::union(
                members
                    .into_iter()
                    .map(|m| Member {
                        ty: m.ty.cut_immediate_refs(cut),
                        doc: m.doc,
                    })
                    .collect(),
            ),
            Ty::Intersection(parts) => Ty::intersection(
                parts
                    .into_iter()
                    .map(|p| p.cut_immediate_refs(cut))
                    .collect(),
            ),
            ty => ty,
        }
    }
}

/// Adds `props` to `target`; a property both declare gets the
/// intersection of both types, and stays optional only if both say so.
fn merge_props(target: &mut Object, props: Vec<Prop>) {
    let mut index: HashMap<String, usize> = target
        .props
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), i))
        .collect();
    for prop in props {
        if let Some(existing) = index.get(&prop.name).map(|&i| &mut target.props[i]) {
            let ty = std::mem::replace(&mut existing.ty, Ty::Unknown);
            existing.ty = Ty::intersection(vec![ty, prop.ty]);
            existing.optional &= prop.optional;
            if existing.doc.is_empty() {
                existing.doc = prop.doc;
            }
        } else {
            index.insert(prop.name.clone(), target.props.len());
            target.props.push(prop);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Ty {
        Ty::Literal(format!("\"{s}\""))
    }

    fn prop(name: &str, ty: Ty, optional: bool) -> Prop {
        Prop {
            name: name.into(),
            optional,
            ty,
            doc: Doc::default(),
        }
    }

    #[test]
    fn unions_flatten_and_simplify() {
        let inner = Ty::union_of(vec![lit("a"), lit("b")]);
        let u = Ty::union_of(vec![inner, Ty::Never, lit("a"), Ty::Null]);
        assert_eq!(u, Ty::union_of(vec![lit("a"), lit("b"), Ty::Null]));
        assert_eq!(Ty::union_of(vec![Ty::String, Ty::Unknown]), Ty::Unknown);
        assert_eq!(Ty::union_of(vec![]), Ty::Never);
        assert_eq!(Ty::union_of(vec![Ty::String, Ty::String]), Ty::String);
    }

    #[test]
    fn repeated_union_members_keep_a_doc() {
        let u = Ty::union(vec![
            Member {
                ty: Ty::String,
                doc: Doc::default(),
            },
            Member {
                ty: Ty::String,
                doc: Doc::text("x"),
            },
            Member {
                ty: Ty::Null,
                doc: Doc::default(),
            },
        ]);
        let Ty::Union(members) = u else {
            panic!("a union")
        };
        assert_eq!(members[0].doc, Doc::text("x"));
    }

    #[test]
    fn intersections_merge_plain_objects() {
        let a = Ty::Object(Object {
            props: vec![prop("id", Ty::Number, false), prop("x", Ty::String, true)],
            index: None,
        });
        let b = Ty::Object(Object {
            props: vec![prop("x", Ty::String, false), prop("y", Ty::Null, true)],
            index: None,
        });
        let i = Ty::intersection(vec![a, Ty::Unknown, b]);
        assert_eq!(
            i,
            Ty::Object(Object {
                props: vec![
                    prop("id", Ty::Number, false),
                    prop("x", Ty::String, false),
                    prop("y", Ty::Null, true)
                ],
                index: None
            })
        );
    }

    #[test]
    fn intersections_drop_empty_objects_and_absorb_never() {
        let u = Ty::union_of(vec![lit("a"), lit("b")]);
        assert_eq!(
            Ty::intersection(vec![Ty::empty_object(), u.clone()]),
            u.clone()
        );
        assert_eq!(
            Ty::intersection(vec![Ty::empty_object()]),
            Ty::empty_object()
        );
        assert_eq!(Ty::intersection(vec![u, Ty::Never]), Ty::Never);
        assert_eq!(Ty::intersection(vec![]), Ty::Unknown);
    }

    #[test]
    fn immediate_references_skip_deferred_positions() {
        let ty = Ty::union_of(vec![
            Ty::Ref(1),
            Ty::Array(Box::new(Ty::Ref(2))),
            Ty::intersection(vec![Ty::Ref(3), Ty::Ref(4)]),
            Ty::Object(Object {
                props: vec![prop("x", Ty::Ref(5), false)],
                index: None,
            }),
        ]);
        let mut seen = Vec::new();
        ty.immediate_refs(&mut |id| seen.push(id));
        assert_eq!(seen, [1, 3, 4]);
        let cut = ty.cut_immediate_refs(&|id| id == 3);
        let mut seen = Vec::new();
        cut.immediate_refs(&mut |id| seen.push(id));
        assert_eq!(seen, [1, 4]);
        let cut = cut.cut_immediate_refs(&|id| id == 1);
        assert_eq!(cut, Ty::Unknown);
    }
}
