//! The checking serializer: builds the `serde_json::Value` in one pass and
//! fails on anything JSON would silently change. Scalars are handed to
//! `serde_json`'s own value serializer after the checks, so every value that
//! passes comes out exactly as `serde_json::to_value` would write it.

use serde::Serialize;
use serde::ser;
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::fault::Fault;
use super::key::KeySerializer;
use super::{MAX_DEPTH, Reason, Segment};

fn from_json(e: serde_json::Error) -> Fault {
    Fault::new(Reason::Custom(e.to_string()))
}

fn check_float(f: f64) -> Result<(), Fault> {
    if f.is_nan() {
        Err(Fault::new(Reason::Nan))
    } else if f.is_infinite() {
        Err(Fault::new(Reason::Infinite))
    } else if f == 0.0 && f.is_sign_negative() {
        Err(Fault::new(Reason::NegativeZero))
    } else {
        Ok(())
    }
}

/// Serializes one value at `depth` levels of nesting.
#[derive(Clone, Copy)]
pub(super) struct ValueSerializer {
    depth: usize,
}

impl ValueSerializer {
    pub(super) const ROOT: ValueSerializer = ValueSerializer { depth: 0 };

    /// The depth of the children of a container opened here (one level
    /// down), or `TooDeep` when that container would be too deep.
    fn open(self, levels: usize) -> Result<ValueSerializer, Fault> {
        let depth = self.depth + levels;
        if depth > MAX_DEPTH {
            Err(Fault::new(Reason::TooDeep))
        } else {
            Ok(ValueSerializer { depth })
        }
    }
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = Fault;

    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = TupleVariantBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = StructVariantBuilder;

    fn serialize_bool(self, v: bool) -> Result<Value, Fault> {
        Ok(Value::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_i128(self, v: i128) -> Result<Value, Fault> {
        serde_json::value::Serializer
            .serialize_i128(v)
            .map_err(from_json)
    }

    fn serialize_u8(self, v: u8) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<Value, Fault> {
        Ok(Value::from(v))
    }

    fn serialize_u128(self, v: u128) -> Result<Value, Fault> {
        serde_json::value::Serializer
            .serialize_u128(v)
            .map_err(from_json)
    }

    fn serialize_f32(self, v: f32) -> Result<Value, Fault> {
        check_float(f64::from(v))?;
        serde_json::value::Serializer
            .serialize_f32(v)
            .map_err(from_json)
    }

    fn serialize_f64(self, v: f64) -> Result<Value, Fault> {
        check_float(v)?;
        serde_json::value::Serializer
            .serialize_f64(v)
            .map_err(from_json)
    }

    fn serialize_char(self, v: char) -> Result<Value, Fault> {
        Ok(Value::String(v.to_string()))
    }

    fn serialize_str(self, v: &str) -> Result<Value, Fault> {
        Ok(Value::String(v.to_owned()))
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Fault> {
        self.open(1)?;
        Ok(Value::Array(v.iter().map(|&b| Value::from(b)).collect()))
    }

    fn serialize_none(self) -> Result<Value, Fault> {
        Ok(Value::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Fault> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Value, Fault> {
        Ok(Value::Null)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Fault> {
        Ok(Value::Null)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Fault> {
        Ok(Value::String(variant.to_owned()))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Fault> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Fault> {
        let inner = value
            .serialize(self.open(1)?)
            .map_err(|f| f.at(Segment::Field(variant)))?;
        let mut object = Map::new();
        object.insert(variant.to_owned(), inner);
        Ok(Value::Object(object))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, Fault> {
        Ok(SeqBuilder {
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            child: self.open(1)?,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, Fault> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder, Fault> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<TupleVariantBuilder, Fault> {
        let child = self.open(2)?;
        Ok(TupleVariantBuilder {
            variant,
            seq: SeqBuilder {
                items: Vec::with_capacity(len.min(4096)),
                child,
            },
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, Fault> {
        Ok(MapBuilder {
            map: Map::new(),
            key: None,
            written: 0,
            child: self.open(1)?,
        })
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<StructBuilder, Fault> {
        Ok(StructBuilder {
            map: Map::new(),
            child: self.open(1)?,
        })
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<StructVariantBuilder, Fault> {
        Ok(StructVariantBuilder {
            variant,
            fields: StructBuilder {
                map: Map::new(),
                child: self.open(2)?,
            },
        })
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

/// Sequences, tuples and tuple structs.
pub(super) struct SeqBuilder {
    items: Vec<Value>,
    child: ValueSerializer,
}

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        let index = self.items.len();
        let item = value
            .serialize(self.child)
            .map_err(|f| f.at(Segment::Index(index)))?;
        self.items.push(item);
        Ok(())
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        self.push(value)
    }

    fn end(self) -> Result<Value, Fault> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        self.push(value)
    }

    fn end(self) -> Result<Value, Fault> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        self.push(value)
    }

    fn end(self) -> Result<Value, Fault> {
        Ok(Value::Array(self.items))
    }
}

/// Tuple variants, written by serde_json as `{"Variant": [...]}`.
pub(super) struct TupleVariantBuilder {
    variant: &'static str,
    seq: SeqBuilder,
}

impl ser::SerializeTupleVariant for TupleVariantBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        self.seq
            .push(value)
            .map_err(|f| f.at(Segment::Field(self.variant)))
    }

    fn end(self) -> Result<Value, Fault> {
        let mut object = Map::new();
        object.insert(self.variant.to_owned(), Value::Array(self.seq.items));
        Ok(Value::Object(object))
    }
}

/// Maps: each key must become a string, and no key may come twice.
pub(super) struct MapBuilder {
    map: Map<String, Value>,
    /// The key given by `serialize_key`, waiting for its value.
    key: Option<String>,
    /// Entries written so far: the position of the next one.
    written: usize,
    child: ValueSerializer,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Fault> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fault> {
        let position = self.written;
        let Some(key) = self.key.take() else {
            return Err(Fault::new(Reason::Custom(
                "a map value was written before its key".to_owned(),
            )));
        };
        let value = match value.serialize(self.child) {
            Ok(value) => value,
            Err(fault) => {
                return Err(fault.at(Segment::Key {
                    position,
                    key: Some(key),
                }));
            }
        };
        self.written += 1;
        match self.map.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(value);
                Ok(())
            }
            Entry::Occupied(slot) => Err(Fault::new(Reason::DuplicateKey).at(Segment::Key {
                position,
                key: Some(slot.key().clone()),
            })),
        }
    }

    fn end(self) -> Result<Value, Fault> {
        Ok(Value::Object(self.map))
    }
}

/// Structs, whose field names the type declares.
pub(super) struct StructBuilder {
    map: Map<String, Value>,
    child: ValueSerializer,
}

impl ser::SerializeStruct for StructBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Fault> {
        let value = value
            .serialize(self.child)
            .map_err(|f| f.at(Segment::Field(name)))?;
        match self.map.entry(name) {
            Entry::Vacant(slot) => {
                slot.insert(value);
                Ok(())
            }
            Entry::Occupied(_) => Err(Fault::new(Reason::DuplicateKey).at(Segment::Field(name))),
        }
    }

    fn end(self) -> Result<Value, Fault> {
        Ok(Value::Object(self.map))
    }
}

/// Struct variants, written by serde_json as `{"Variant": {...}}`.
pub(super) struct StructVariantBuilder {
    variant: &'static str,
    fields: StructBuilder,
}

impl ser::SerializeStructVariant for StructVariantBuilder {
    type Ok = Value;
    type Error = Fault;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Fault> {
        ser::SerializeStruct::serialize_field(&mut self.fields, name, value)
            .map_err(|f| f.at(Segment::Field(self.variant)))
    }

    fn end(self) -> Result<Value, Fault> {
        let mut object = Map::new();
        object.insert(self.variant.to_owned(), Value::Object(self.fields.map));
        Ok(Value::Object(object))
    }
}
