//! What an event is, as the journal stores it: a tag, a number fixed in the data, and a body of
//! one of four shapes. The journal never knows what a tag means: the vocabulary (names, meanings,
//! which kinds another event causes) is `projections::kind`.
//!
//! The tags 0.1 wrote were a Rust enum's variant indices, each followed bare by its variant's
//! fields. Those 14 tags keep that encoding forever (`FROZEN`), so every stored byte and every
//! chain hash stays what it was. A tag from 14 on writes its shape first, so a new kind needs no
//! change here and an older build still reads it (as a tag it does not know).

/// A place in the log (`envelope::Seq`; kept here so the wire kinds import nothing of the log).
type Seq = u64;
use serde::de::{self, EnumAccess, SeqAccess, VariantAccess, Visitor};
use serde::ser::{self, SerializeTupleVariant};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A kind's number on the wire.
pub type Tag = u32;

/// The fields a kind carries besides its tag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// Nothing.
    Empty,
    /// One string.
    Text(String),
    /// One sequence number.
    Seq(Seq),
    /// A string, then a sequence number.
    TextSeq(String, Seq),
}

/// A body's shape, without its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `Body::Empty`.
    Empty = 0,
    /// `Body::Text`.
    Text = 1,
    /// `Body::Seq`.
    Seq = 2,
    /// `Body::TextSeq`.
    TextSeq = 3,
}

/// What an event is on the wire: a tag and its body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WireKind {
    /// The kind's number, fixed in the data.
    pub tag: Tag,
    /// Its fields.
    pub body: Body,
}

/// The shapes of the tags 0.1 wrote (tag = index), written without a shape byte. Never edited:
/// journals hold these bytes, and their hashes cover them.
pub const FROZEN: [Shape; 14] = [
    Shape::Text,    // 0
    Shape::Text,    // 1
    Shape::Seq,     // 2
    Shape::Seq,     // 3
    Shape::Seq,     // 4
    Shape::Seq,     // 5
    Shape::Seq,     // 6
    Shape::Seq,     // 7
    Shape::TextSeq, // 8
    Shape::Empty,   // 9
    Shape::Seq,     // 10
    Shape::Seq,     // 11
    Shape::Empty,   // 12
    Shape::Empty,   // 13
];

/// The frozen shape of `tag`, or `None` for a tag that writes its shape.
pub fn frozen_shape(tag: Tag) -> Option<Shape> {
    FROZEN.get(tag as usize).copied()
}

impl Body {
    /// The body's shape.
    pub fn shape(&self) -> Shape {
        match self {
            Body::Empty => Shape::Empty,
            Body::Text(_) => Shape::Text,
            Body::Seq(_) => Shape::Seq,
            Body::TextSeq(..) => Shape::TextSeq,
        }
    }

    fn fields(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::Text(_) | Body::Seq(_) => 1,
            Body::TextSeq(..) => 2,
        }
    }
}

impl Shape {
    fn from_byte(b: u8) -> Option<Shape> {
        [Shape::Empty, Shape::Text, Shape::Seq, Shape::TextSeq]
            .get(b as usize)
            .copied()
    }

    fn fields(self) -> usize {
        match self {
            Shape::Empty => 0,
            Shape::Text | Shape::Seq => 1,
            Shape::TextSeq => 2,
        }
    }
}

// Written as serde writes an enum variant (bincode: the tag as the variant index, then the
// fields), which is what 0.1's derived `Kind` wrote for tags 0..14.
impl Serialize for WireKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let frozen = frozen_shape(self.tag);
        if let Some(shape) = frozen.filter(|s| *s != self.body.shape()) {
            return Err(ser::Error::custom(format!(
                "kind tag {} carries a {:?} body, not {:?}",
                self.tag,
                shape,
                self.body.shape()
            )));
        }
        let len = self.body.fields() + usize::from(frozen.is_none());
        let mut v = s.serialize_tuple_variant("Kind", self.tag, "kind", len)?;
        if frozen.is_none() {
            v.serialize_field(&(self.body.shape() as u8))?;
        }
        match &self.body {
            Body::Empty => {}
            Body::Text(t) => v.serialize_field(t)?,
            Body::Seq(n) => v.serialize_field(n)?,
            Body::TextSeq(t, n) => {
                v.serialize_field(t)?;
                v.serialize_field(n)?;
            }
        }
        v.end()
    }
}

impl<'de> Deserialize<'de> for WireKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("Kind", &[], KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = WireKind;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a kind: a tag and its body")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<WireKind, A::Error> {
        let (tag, variant): (Tag, _) = data.variant()?;
        let frozen = frozen_shape(tag);
        // At most a shape byte and two fields; the shape says how many are read.
        let len = frozen.map_or(3, Shape::fields);
        variant.tuple_variant(len, BodyVisitor { tag, frozen })
    }
}

struct BodyVisitor {
    tag: Tag,
    frozen: Option<Shape>,
}

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = WireKind;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "the body of kind tag {}", self.tag)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireKind, A::Error> {
        let missing = || de::Error::custom(format!("kind tag {}: body cut short", self.tag));
        let shape = match self.frozen {
            Some(shape) => shape,
            None => {
                let b: u8 = seq.next_element()?.ok_or_else(missing)?;
                Shape::from_byte(b).ok_or_else(|| {
                    de::Error::custom(format!("kind tag {}: no body shape {b}", self.tag))
                })?
            }
        };
        let body = match shape {
            Shape::Empty => Body::Empty,
            Shape::Text => Body::Text(seq.next_element()?.ok_or_else(missing)?),
            Shape::Seq => Body::Seq(seq.next_element()?.ok_or_else(missing)?),
            Shape::TextSeq => Body::TextSeq(
                seq.next_element()?.ok_or_else(missing)?,
                seq.next_element()?.ok_or_else(missing)?,
            ),
        };
        Ok(WireKind {
            tag: self.tag,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(k: &WireKind) -> Vec<u8> {
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(k, cfg).unwrap();
        let (back, used): (WireKind, usize) =
            bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        assert_eq!(&back, k);
        assert_eq!(used, bytes.len());
        bytes
    }

    #[test]
    fn a_tag_after_the_frozen_ones_writes_its_shape_and_reads_back() {
        let bodies = [
            Body::Empty,
            Body::Text("x".into()),
            Body::Seq(300),
            Body::TextSeq("s".into(), 7),
        ];
        for (i, body) in bodies.into_iter().enumerate() {
            let bytes = round_trip(&WireKind { tag: 14, body });
            assert_eq!(&bytes[..2], &[14, i as u8]);
        }
        round_trip(&WireKind {
            tag: 1000,
            body: Body::Seq(1),
        });
    }

    #[test]
    fn a_frozen_tag_refuses_a_body_of_another_shape() {
        let k = WireKind {
            tag: 0,
            body: Body::Seq(1),
        };
        let err = bincode::serde::encode_to_vec(&k, bincode::config::standard()).unwrap_err();
        assert!(err.to_string().contains("kind tag 0"), "{err}");
    }

    #[test]
    fn an_unknown_shape_byte_is_an_error_not_a_guess() {
        let err =
            bincode::serde::decode_from_slice::<WireKind, _>(&[20, 9], bincode::config::standard())
                .unwrap_err();
        assert!(err.to_string().contains("no body shape 9"), "{err}");
    }
}
