//! Facilities and markers: which `(facility_id, event_id)` of an event
//! header is which event, and how its payload is laid out.
//!
//! The specification says that facility 0 is `core` (the facility whose
//! `marker_id`, `marker_format` and `time_heartbeat` events fill the
//! `control/facilities_N` tracefiles) and that the first two describe the
//! events of the trace. It does not give their ids or payloads; tracemux
//! reads them as follows (README, "Where the specification is silent"):
//!
//! | event id | name | payload (a marker format string) |
//! |---|---|---|
//! | 0 | `marker_id` | [`MARKER_ID_FORMAT`] |
//! | 1 | `marker_format` | [`MARKER_FORMAT_FORMAT`] |
//! | 2 | `time_heartbeat` | empty: the header's 32-bit timestamp is all it carries |
//! | 3 | `time_heartbeat_full` | `tsc %llu`: the whole 64-bit cycle counter |
//!
//! These are the payloads of LTTng 0.x's `core` events with the facility
//! (later called the channel) named in front and the 16-bit event id split
//! into the header's two 8-bit ids. A `marker_id` binds `(facility_id,
//! event_id)` to a facility name, an event name and the C type sizes; a
//! `marker_format` gives the format string of `(facility, name)`. Either
//! may come first.

use std::collections::HashMap;

use tracemux_core::bytes::Endian;
use tracemux_core::model::Value;

use crate::format::{parse_format, FieldIter, FieldSpec, Sizes};

/// Facility id of the `core` facility.
pub const CORE_FACILITY: u8 = 0;
/// `core` event ids.
pub const CORE_MARKER_ID: u8 = 0;
pub const CORE_MARKER_FORMAT: u8 = 1;
pub const CORE_TIME_HEARTBEAT: u8 = 2;
pub const CORE_TIME_HEARTBEAT_FULL: u8 = 3;

/// Payload of `core:marker_id`.
pub const MARKER_ID_FORMAT: &str = "facility %s name %s facility_id %hhu event_id %hhu \
int_size %hhu long_size %hhu pointer_size %hhu size_t_size %hhu alignment %hhu";
/// Payload of `core:marker_format`.
pub const MARKER_FORMAT_FORMAT: &str = "facility %s name %s format %s";
/// Payload of `core:time_heartbeat`.
pub const TIME_HEARTBEAT_FORMAT: &str = "";
/// Payload of `core:time_heartbeat_full`.
pub const TIME_HEARTBEAT_FULL_FORMAT: &str = "tsc %llu";

/// The dense key of an event type: `facility_id << 8 | event_id`.
#[inline]
pub fn type_key(facility: u8, event: u8) -> u16 {
    (facility as u16) << 8 | event as u16
}

/// One known event type.
#[derive(Debug, Clone)]
pub struct EventType {
    pub facility_id: u8,
    pub event_id: u8,
    pub facility: String,
    pub name: String,
    /// `facility:name`, as printed.
    pub full_name: String,
    pub sizes: Sizes,
    /// The format string, once a `marker_format` gave it.
    pub format: Option<String>,
    /// The fields, or why the format cannot be used (no format yet counts
    /// as "no fields known").
    pub fields: Result<Vec<FieldSpec>, String>,
}

impl EventType {
    /// Decode a payload of this type.
    pub fn decode<'s, 'd>(
        &'s self,
        payload: &'d [u8],
        endian: Endian,
    ) -> Option<FieldIter<'s, 'd>> {
        match &self.fields {
            Ok(f) => Some(FieldIter::new(f, payload, endian, self.sizes.alignment)),
            Err(_) => None,
        }
    }
}

/// Everything the facilities tracefiles said, resolved once before events
/// are read.
#[derive(Debug, Clone)]
pub struct Registry {
    /// `type_key` -> index + 1 into `types` (0: unknown).
    index: Vec<u32>,
    types: Vec<EventType>,
    facility_names: Vec<Option<String>>,
    /// Formats by (facility, name), from `marker_format`.
    formats: HashMap<(String, String), String>,
    /// Inconsistencies met while registering (conflicting ids, formats).
    pub problems: Vec<String>,
}

impl Registry {
    /// A registry that knows the `core` facility only. `arch_size` and
    /// `alignment` come from the trace header (the core events use them).
    pub fn new(arch_size: u8, alignment: u8) -> Registry {
        let mut r = Registry {
            index: vec![0; 1 << 16],
            types: Vec::new(),
            facility_names: vec![None; 256],
            formats: HashMap::new(),
            problems: Vec::new(),
        };
        r.facility_names[CORE_FACILITY as usize] = Some("core".into());
        let sizes = Sizes::for_arch(arch_size, alignment);
        for (id, name, fmt) in [
            (CORE_MARKER_ID, "marker_id", MARKER_ID_FORMAT),
            (CORE_MARKER_FORMAT, "marker_format", MARKER_FORMAT_FORMAT),
            (CORE_TIME_HEARTBEAT, "time_heartbeat", TIME_HEARTBEAT_FORMAT),
            (
                CORE_TIME_HEARTBEAT_FULL,
                "time_heartbeat_full",
                TIME_HEARTBEAT_FULL_FORMAT,
            ),
        ] {
            r.insert(EventType {
                facility_id: CORE_FACILITY,
                event_id: id,
                facility: "core".into(),
                name: name.into(),
                full_name: format!("core:{name}"),
                sizes,
                format: Some(fmt.into()),
                fields: parse_format(fmt.as_bytes(), &sizes),
            });
        }
        r
    }

    fn insert(&mut self, t: EventType) {
        let k = type_key(t.facility_id, t.event_id) as usize;
        self.types.push(t);
        self.index[k] = self.types.len() as u32;
    }

    /// The type of `(facility, event)`, if a `marker_id` named it.
    #[inline]
    pub fn get(&self, facility: u8, event: u8) -> Option<&EventType> {
        match self.index[type_key(facility, event) as usize] {
            0 => None,
            i => self.types.get(i as usize - 1),
        }
    }

    /// The name of facility `id`, if known.
    pub fn facility_name(&self, id: u8) -> Option<&str> {
        self.facility_names[id as usize].as_deref()
    }

    /// All known types, `core` first, then in the order they were named.
    pub fn types(&self) -> impl Iterator<Item = &EventType> {
        self.types.iter()
    }

    /// Known facilities: (id, name).
    pub fn facilities(&self) -> impl Iterator<Item = (u8, &str)> {
        self.facility_names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_deref().map(|n| (i as u8, n)))
    }

    /// Register a `core` event read from a facilities tracefile. Events
    /// that are not `marker_id` / `marker_format`, or whose payload does
    /// not decode, are ignored (the caller reports payload damage).
    pub fn register(&mut self, event_id: u8, payload: &[u8], endian: Endian) {
        let Some(t) = self.get(CORE_FACILITY, event_id) else {
            return;
        };
        let Some(it) = t.decode(payload, endian) else {
            return;
        };
        let mut strs: [&[u8]; 3] = [&[]; 3];
        let mut nums = [0u8; 7];
        let (mut ns, mut nn) = (0, 0);
        for r in it {
            match r {
                Ok((_, Value::Str(s))) if ns < 3 => {
                    strs[ns] = s;
                    ns += 1;
                }
                Ok((_, Value::Unsigned(v))) if nn < 7 => {
                    nums[nn] = v as u8;
                    nn += 1;
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match event_id {
            CORE_MARKER_ID => self.marker_id(
                s(strs[0]),
                s(strs[1]),
                nums[0],
                nums[1],
                Sizes {
                    int_size: nums[2],
                    long_size: nums[3],
                    pointer_size: nums[4],
                    size_t_size: nums[5],
                    alignment: nums[6],
                },
            ),
            CORE_MARKER_FORMAT => self.marker_format(s(strs[0]), s(strs[1]), s(strs[2])),
            _ => {}
        }
    }

    /// Bind `(facility_id, event_id)` to `facility:name` with `sizes`.
    pub fn marker_id(
        &mut self,
        facility: String,
        name: String,
        facility_id: u8,
        event_id: u8,
        sizes: Sizes,
    ) {
        if facility_id == CORE_FACILITY {
            self.problems.push(format!(
                "marker_id for {facility}:{name} uses facility id 0, which is reserved for core; ignored"
            ));
            return;
        }
        if let Some(old) = self.get(facility_id, event_id) {
            if old.facility != facility || old.name != name || old.sizes != sizes {
                self.problems.push(format!(
                    "marker_id gives ids {facility_id}/{event_id} to {facility}:{name}, \
                     already {}; the first one is kept",
                    old.full_name
                ));
            }
            return;
        }
        match &self.facility_names[facility_id as usize] {
            Some(n) if *n != facility => self.problems.push(format!(
                "facility id {facility_id} is named both {n} and {facility}; {n} is kept"
            )),
            Some(_) => {}
            None => self.facility_names[facility_id as usize] = Some(facility.clone()),
        }
        let format = self.formats.get(&(facility.clone(), name.clone())).cloned();
        let fields = match &format {
            Some(f) => parse_format(f.as_bytes(), &sizes),
            None => Err("no marker_format".into()),
        };
        let fac = self.facility_names[facility_id as usize]
            .clone()
            .unwrap_or(facility);
        self.insert(EventType {
            facility_id,
            event_id,
            full_name: format!("{fac}:{name}"),
            facility: fac,
            name,
            sizes,
            format,
            fields,
        });
    }

    /// Give `facility:name` its format string.
    pub fn marker_format(&mut self, facility: String, name: String, format: String) {
        if let Some(old) = self.formats.get(&(facility.clone(), name.clone())) {
            if *old != format {
                self.problems.push(format!(
                    "two formats for {facility}:{name}: \"{old}\" and \"{format}\"; the first one is kept"
                ));
            }
            return;
        }
        for t in self.types.iter_mut() {
            if t.facility_id != CORE_FACILITY && t.facility == facility && t.name == name {
                t.fields = parse_format(format.as_bytes(), &t.sizes);
                t.format = Some(format.clone());
            }
        }
        self.formats.insert((facility, name), format);
    }

    /// Formats given by `marker_format` for markers no `marker_id` named.
    pub fn orphan_formats(&self) -> impl Iterator<Item = (&str, &str)> {
        self.formats.keys().filter_map(|(f, n)| {
            let named = self
                .types
                .iter()
                .any(|t| t.facility == *f && t.name == *n && t.facility_id != CORE_FACILITY);
            (!named).then_some((f.as_str(), n.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes() -> Sizes {
        Sizes::for_arch(8, 8)
    }

    #[test]
    fn core_is_built_in() {
        let r = Registry::new(8, 0);
        assert_eq!(r.get(0, 0).unwrap().full_name, "core:marker_id");
        assert_eq!(r.get(0, 3).unwrap().full_name, "core:time_heartbeat_full");
        assert!(r.get(0, 4).is_none());
        assert_eq!(r.get(0, 0).unwrap().fields.as_ref().unwrap().len(), 9);
    }

    #[test]
    fn id_and_format_in_either_order() {
        let mut r = Registry::new(8, 8);
        r.marker_format("fs".into(), "open".into(), "fd %d name %s".into());
        r.marker_id("fs".into(), "open".into(), 3, 1, sizes());
        r.marker_id("kernel".into(), "irq".into(), 4, 0, sizes());
        r.marker_format("kernel".into(), "irq".into(), "irq %u".into());
        assert_eq!(r.get(3, 1).unwrap().fields.as_ref().unwrap().len(), 2);
        assert_eq!(r.get(4, 0).unwrap().fields.as_ref().unwrap()[0].name, "irq");
        assert!(r.problems.is_empty());
        // conflicts are noted, the first binding stays
        r.marker_id("fs".into(), "close".into(), 3, 1, sizes());
        r.marker_id("net".into(), "rx".into(), 3, 2, sizes());
        r.marker_id("x".into(), "y".into(), 0, 9, sizes());
        assert_eq!(r.get(3, 1).unwrap().name, "open");
        assert_eq!(r.get(3, 2).unwrap().full_name, "fs:rx");
        assert!(r.get(0, 9).is_none());
        assert_eq!(r.problems.len(), 3);
    }
}
