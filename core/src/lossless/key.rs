//! Map keys: what may become a JSON object key, as the string it becomes.
//!
//! Strings and chars are kept; integers and bools are written as their
//! decimal or `true`/`false` text, unit variants as their name, and newtype
//! structs as what they wrap, as `serde_json` writes them. Floats are
//! refused (their text is not a faithful key), and so is anything compound.

use serde::Serialize;
use serde::ser::{self, Impossible};

use super::Reason;
use super::fault::Fault;

/// Turns a map key into the string JSON writes for it.
pub(super) struct KeySerializer;

fn refused<T>() -> Result<T, Fault> {
    Err(Fault::new(Reason::NonStringKey))
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Fault;

    type SerializeSeq = Impossible<String, Fault>;
    type SerializeTuple = Impossible<String, Fault>;
    type SerializeTupleStruct = Impossible<String, Fault>;
    type SerializeTupleVariant = Impossible<String, Fault>;
    type SerializeMap = Impossible<String, Fault>;
    type SerializeStruct = Impossible<String, Fault>;
    type SerializeStructVariant = Impossible<String, Fault>;

    fn serialize_bool(self, v: bool) -> Result<String, Fault> {
        Ok(if v { "true" } else { "false" }.to_owned())
    }

    fn serialize_i8(self, v: i8) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_i16(self, v: i16) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_i32(self, v: i32) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_i64(self, v: i64) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_i128(self, v: i128) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_u8(self, v: u8) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_u16(self, v: u16) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_u32(self, v: u32) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_u64(self, v: u64) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_u128(self, v: u128) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_f32(self, _v: f32) -> Result<String, Fault> {
        refused()
    }

    fn serialize_f64(self, _v: f64) -> Result<String, Fault> {
        refused()
    }

    fn serialize_char(self, v: char) -> Result<String, Fault> {
        Ok(v.to_string())
    }

    fn serialize_str(self, v: &str) -> Result<String, Fault> {
        Ok(v.to_owned())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Fault> {
        refused()
    }

    fn serialize_none(self) -> Result<String, Fault> {
        refused()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, Fault> {
        refused()
    }

    fn serialize_unit(self) -> Result<String, Fault> {
        refused()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Fault> {
        refused()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Fault> {
        Ok(variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Fault> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Fault> {
        refused()
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Fault> {
        refused()
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Fault> {
        refused()
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Fault> {
        refused()
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Fault> {
        refused()
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Fault> {
        refused()
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Fault> {
        refused()
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Fault> {
        refused()
    }

    fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Result<String, Fault> {
        Ok(value.to_string())
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}
