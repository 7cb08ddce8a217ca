//! Writing a [`Ty`] as TypeScript text: on one line when it fits in
//! [`WIDTH`] columns and carries no JSDoc, else broken over lines the way
//! prettier would (objects one property a line, unions one member a line
//! behind a leading `|`).

use super::doc::Doc;
use super::names::property_key;
use super::types::{Member, Object, Ty};

/// The line width a type is kept within when it can be.
const WIDTH: usize = 80;

/// Writes types; references become `prefix` + the named type's name.
#[derive(Debug)]
pub(crate) struct Printer<'a> {
    /// The names of the scope's named types, by index.
    pub(crate) names: &'a [String],
    /// Written before each name: empty inside the scope's namespace, the
    /// namespace's path and a dot outside it.
    pub(crate) prefix: &'a str,
}

impl Printer<'_> {
    /// The type on one line, or `None` when it carries JSDoc.
    pub(crate) fn flat(&self, ty: &Ty) -> Option<String> {
        let mut out = String::new();
        self.flat_into(ty, &mut out).then_some(out)
    }

    fn flat_into(&self, ty: &Ty, out: &mut String) -> bool {
        match ty {
            Ty::Unknown => out.push_str("unknown"),
            Ty::Never => out.push_str("never"),
            Ty::Undefined => out.push_str("undefined"),
            Ty::String => out.push_str("string"),
            Ty::Number => out.push_str("number"),
            Ty::Boolean => out.push_str("boolean"),
            Ty::Null => out.push_str("null"),
            Ty::Literal(text) => out.push_str(text),
            Ty::Ref(id) => self.reference(*id, out),
            Ty::Array(el) => {
                let wrap = needs_parens(el);
                if wrap {
                    out.push('(');
                }
                if !self.flat_into(el, out) {
                    return false;
                }
                if wrap {
                    out.push(')');
                }
                out.push_str("[]");
            }
            Ty::Tuple(t) => {
                out.push('[');
                let mut first = true;
                for (i, el) in t.elements.iter().enumerate() {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let optional = i >= t.required;
                    let wrap = optional && needs_parens(el);
                    if wrap {
                        out.push('(');
                    }
                    if !self.flat_into(el, out) {
                        return false;
                    }
                    if wrap {
                        out.push(')');
                    }
                    if optional {
                        out.push('?');
                    }
                }
                if let Some(rest) = &t.rest {
                    if !first {
                        out.push_str(", ");
                    }
                    out.push_str("...");
                    if !self.flat_into(&Ty::Array(rest.clone()), out) {
                        return false;
                    }
                }
                out.push(']');
            }
            Ty::Object(o) => {
                if o.props.is_empty() && o.index.is_none() {
                    out.push_str("{}");
                    return true;
                }
                out.push_str("{ ");
                let mut first = true;
                for prop in &o.props {
                    if !prop.doc.is_empty() {
                        return false;
                    }
                    if !first {
                        out.push_str("; ");
                    }
                    first = false;
                    out.push_str(&property_key(&prop.name));
                    out.push_str(if prop.optional { "?: " } else { ": " });
                    if !self.flat_into(&prop.ty, out) {
                        return false;
                    }
                }
                if let Some(index) = &o.index {
                    if !first {
                        out.push_str("; ");
                    }
                    out.push_str("[key: string]: ");
                    if !self.flat_into(index, out) {
                        return false;
                    }
                }
                out.push_str(" }");
            }
            Ty::Union(members) => {
                for (i, m) in members.iter().enumerate() {
                    if !m.doc.is_empty() {
                        return false;
                    }
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    if !self.flat_into(&m.ty, out) {
                        return false;
                    }
                }
            }
            Ty::Intersection(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" & ");
                    }
                    let wrap = matches!(p, Ty::Union(_));
                    if wrap {
                        out.push('(');
                    }
                    if !self.flat_into(p, out) {
                        return false;
                    }
                    if wrap {
                        out.push(')');
                    }
                }
            }
        }
        true
    }

    fn reference(&self, id: usize, out: &mut String) {
        out.push_str(self.prefix);
        out.push_str(self.names.get(id).map_or("unknown", String::as_str));
    }

    /// Writes `ty` where a type follows `name:` or `=` (`out` ends with
    /// either): ` T` on the same line, or a union one member a line.
    /// Lines after the first are indented from `indent`.
    pub(crate) fn slot(&self, ty: &Ty, indent: usize, out: &mut String) {
        if let Some(flat) = self.flat(ty)
            && fits(out, flat.chars().count() + 2)
        {
            out.push(' ');
            out.push_str(&flat);
            return;
        }
        if let Ty::Union(members) = ty {
            self.members(members, indent + 2, out);
        } else {
            out.push(' ');
            self.block(ty, indent, out);
        }
    }

    /// Writes each member on a line of its own, `| T`, indented `at`, its
    /// JSDoc on the lines before it; members that are all simple and
    /// undocumented (a long literal enum) are packed as many a line as fit.
    fn members(&self, members: &[Member], at: usize, out: &mut String) {
        let packed: Option<Vec<String>> = members
            .iter()
            .map(|m| {
                (m.doc.is_empty() && m.ty.is_simple())
                    .then(|| self.flat(&m.ty))
                    .flatten()
            })
            .collect();
        if let Some(flats) = packed {
            for (i, flat) in flats.iter().enumerate() {
                if i == 0 || !fits(out, flat.chars().count() + 4) {
                    out.push('\n');
                    push_spaces(at, out);
                    out.push_str("| ");
                } else {
                    out.push_str(" | ");
                }
                out.push_str(flat);
            }
            return;
        }
        for m in members {
            out.push('\n');
            m.doc.write(at, out);
            push_spaces(at, out);
            out.push_str("| ");
            self.block(&m.ty, at + 2, out);
        }
    }

    /// Writes `ty` from the current column; lines after the first are
    /// indented from `indent`.
    pub(crate) fn block(&self, ty: &Ty, indent: usize, out: &mut String) {
        if let Some(flat) = self.flat(ty)
            && fits(out, flat.chars().count() + 1)
        {
            out.push_str(&flat);
            return;
        }
        match ty {
            Ty::Object(o) => self.object(o, indent, out),
            Ty::Union(members) => {
                out.push('(');
                self.members(members, indent + 2, out);
                out.push('\n');
                push_spaces(indent, out);
                out.push(')');
            }
            Ty::Intersection(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" & ");
                    }
                    self.block(p, indent, out);
                }
            }
            Ty::Array(el) => {
                if let Ty::Intersection(_) = **el {
                    out.push('(');
                    self.block(el, indent, out);
                    out.push(')');
                } else {
                    self.block(el, indent, out);
                }
                out.push_str("[]");
            }
            Ty::Tuple(t) => {
                out.push('[');
                for (i, el) in t.elements.iter().enumerate() {
                    out.push('\n');
                    push_spaces(indent + 2, out);
                    let optional = i >= t.required;
                    if optional && matches!(el, Ty::Intersection(_)) {
                        out.push('(');
                        self.block(el, indent + 2, out);
                        out.push(')');
                    } else {
                        self.block(el, indent + 2, out);
                    }
                    if optional {
                        out.push('?');
                    }
                    out.push(',');
                }
                if let Some(rest) = &t.rest {
                    out.push('\n');
                    push_spaces(indent + 2, out);
                    out.push_str("...");
                    self.block(&Ty::Array(rest.clone()), indent + 2, out);
                    out.push(',');
                }
                out.push('\n');
                push_spaces(indent, out);
                out.push(']');
            }
            // Keywords, literals and references are always flat.
            other => {
                let mut flat = String::new();
                self.flat_into(other, &mut flat);
                out.push_str(&flat);
            }
        }
    }

    /// Writes a named type's declaration at `indent`, after its JSDoc:
    /// `interface Name { … }` for an object type (one property a line),
    /// `type Name = T;` for any other.
    pub(crate) fn declaration(
        &self,
        name: &str,
        ty: &Ty,
        doc: &Doc,
        indent: usize,
        out: &mut String,
    ) {
        doc.write(indent, out);
        push_spaces(indent, out);
        if let Ty::Object(o) = ty {
            out.push_str("interface ");
            out.push_str(name);
            out.push(' ');
            self.object(o, indent, out);
            out.push('\n');
        } else {
            out.push_str("type ");
            out.push_str(name);
            out.push_str(" =");
            self.slot(ty, indent, out);
            out.push_str(";\n");
        }
    }

    /// Writes an object one property a line, each after its JSDoc.
    fn object(&self, o: &Object, indent: usize, out: &mut String) {
        if o.props.is_empty() && o.index.is_none() {
            out.push_str("{}");
            return;
        }
        out.push_str("{\n");
        for prop in &o.props {
            prop.doc.write(indent + 2, out);
            push_spaces(indent + 2, out);
            out.push_str(&property_key(&prop.name));
            out.push_str(if prop.optional { "?:" } else { ":" });
            self.slot(&prop.ty, indent + 2, out);
            out.push_str(";\n");
        }
        if let Some(index) = &o.index {
            push_spaces(indent + 2, out);
            out.push_str("[key: string]:");
            self.slot(index, indent + 2, out);
            out.push_str(";\n");
        }
        push_spaces(indent, out);
        out.push('}');
    }
}

/// Whether `ty` must be put in parentheses before `[]` or `?`.
fn needs_parens(ty: &Ty) -> bool {
    matches!(ty, Ty::Union(_) | Ty::Intersection(_))
}

/// Whether `len` more chars fit on `out`'s last line.
fn fits(out: &str, len: usize) -> bool {
    let column = out.rsplit('\n').next().map_or(0, |l| l.chars().count());
    column + len <= WIDTH
}

fn push_spaces(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::types::{Prop, Tuple};

    const NAMES: &[String] = &[];

    fn p() -> Printer<'static> {
        Printer {
            names: NAMES,
            prefix: "",
        }
    }

    fn lit(s: &str) -> Ty {
        Ty::Literal(format!("\"{s}\""))
    }

    fn prop(name: &str, ty: Ty, optional: bool, doc: &str) -> Prop {
        Prop {
            name: name.into(),
            optional,
            ty,
            doc: Doc::text(doc),
        }
    }

    fn slot(ty: &Ty) -> String {
        let mut out = String::from("x:");
        p().slot(ty, 0, &mut out);
        out
    }

    #[test]
    fn flat_forms() {
        let u = Ty::union_of(vec![Ty::String, Ty::Number]);
        assert_eq!(
            p().flat(&Ty::Array(Box::new(u.clone()))).unwrap(),
            "(string | number)[]"
        );
        let t = Ty::Tuple(Tuple {
            elements: vec![Ty::Number, u.clone()],
            required: 1,
            rest: Some(Box::new(Ty::Boolean)),
        });
        assert_eq!(
            p().flat(&t).unwrap(),
            "[number, (string | number)?, ...boolean[]]"
        );
        let o = Ty::Object(Object {
            props: vec![
                prop("a-b", Ty::String, true, ""),
                prop("c", Ty::Null, false, ""),
            ],
            index: Some(Box::new(Ty::Unknown)),
        });
        assert_eq!(
            p().flat(&o).unwrap(),
            "{ \"a-b\"?: string; c: null; [key: string]: unknown }"
        );
        let i = Ty::Intersection(vec![o.clone(), u]);
        assert!(p().flat(&i).unwrap().ends_with(" & (string | number)"));
        assert_eq!(p().flat(&Ty::empty_object()).unwrap(), "{}");
    }

    #[test]
    fn documented_objects_break() {
        let o = Ty::Object(Object {
            props: vec![prop("path", Ty::String, false, "The file.")],
            index: None,
        });
        assert_eq!(p().flat(&o), None);
        assert_eq!(slot(&o), "x: {\n  /** The file. */\n  path: string;\n}");
    }

    #[test]
    fn long_unions_break_behind_leading_bars() {
        let long: Vec<Ty> = (0..12).map(|i| lit(&format!("member{i}"))).collect();
        assert_eq!(
            slot(&Ty::union_of(long)),
            "x:\n  | \"member0\" | \"member1\" | \"member2\" | \"member3\" | \"member4\" | \"member5\"\n  | \"member6\" | \"member7\" | \"member8\" | \"member9\" | \"member10\" | \"member11\""
        );
        let documented = Ty::union(vec![
            Member {
                ty: lit("titles"),
                doc: Doc::text("Only the titles."),
            },
            Member {
                ty: lit("everything"),
                doc: Doc::text("Titles and bodies."),
            },
        ]);
        assert_eq!(
            slot(&documented),
            "x:\n  /** Only the titles. */\n  | \"titles\"\n  /** Titles and bodies. */\n  | \"everything\""
        );
    }

    #[test]
    fn broken_members_indent_under_their_bar() {
        let obj = Ty::Object(Object {
            props: vec![prop("radius", Ty::Number, false, "The radius.")],
            index: None,
        });
        let u = Ty::union_of(vec![lit("Empty"), obj.clone()]);
        assert_eq!(
            slot(&u),
            "x:\n  | \"Empty\"\n  | {\n      /** The radius. */\n      radius: number;\n    }"
        );
        let mut out = String::from("x:");
        p().slot(&Ty::Array(Box::new(u)), 0, &mut out);
        assert_eq!(
            out,
            "x: (\n  | \"Empty\"\n  | {\n      /** The radius. */\n      radius: number;\n    }\n)[]"
        );
    }

    #[test]
    fn references_take_the_prefix() {
        let names = vec!["Root".to_owned(), "Point".to_owned()];
        let printer = Printer {
            names: &names,
            prefix: "ToolTypes.t.Args.",
        };
        assert_eq!(
            printer.flat(&Ty::Array(Box::new(Ty::Ref(1)))).unwrap(),
            "ToolTypes.t.Args.Point[]"
        );
    }
}
