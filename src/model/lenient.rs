//! Tolerant deserializers for numeric fields.
//!
//! opencode writes JavaScript numbers: a token count may come as `12` or `12.0`,
//! and a missing or `null` value must not turn a whole event into an error.

use serde::{Deserialize, Deserializer};

/// Any JSON number (or null) as an `f64`; other types become 0.
pub fn f64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Number::deserialize(d)?.0.unwrap_or(0.0))
}

/// Any JSON number as a `u64` (negative and fractional values are clamped).
pub fn u64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Number::deserialize(d)?.0.map(to_u64).unwrap_or(0))
}

/// An optional epoch-millisecond timestamp.
pub fn opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Number::deserialize(d)?.0.map(|v| v as i64))
}

/// An optional count.
pub fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Number::deserialize(d)?.0.map(to_u64))
}

fn to_u64(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// A number, or `None` for null, strings, objects and anything else.
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Number, E> {
                Ok(Number(Some(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Number, E> {
                Ok(Number(v.trim().parse().ok()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_unit<E>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_none<E>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Number, D::Error> {
                Number::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Number, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Number, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Number(None))
            }
        }
        d.deserialize_any(V)
    }
}
