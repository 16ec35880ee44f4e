//! A differential corpus for the decoder: for every component, arbitrary values (proptest's deterministic runner, so
//! every build sees the same ones) written as JSON text with mutations (members missing, repeated, unknown, of
//! another JSON kind, enum values that are none, objects written as arrays), each decoded from the text, from a
//! `serde_json::Value` and from a `&Value`; one block per case with the three outcomes (the value encoded again, or
//! the error message with serde_json's position). Run it on two builds and compare: a change of the decoder
//! should change nothing here (docs/performance.md, "How the decoder was checked").
//!
//! ```sh
//! cargo run --release --example decode_corpus -- 24 > after.txt    # 24 values of each component
//! cmp before.txt after.txt
//! ```

use std::fmt::Write as _;

use bridge_contract::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const ODD: [&str; 14] =
    ["null", "true", "0", "1", "-1", "1.5", "1e400", "\"x\"", "\"\"", "[]", "{}", "[1]", "{\"a\":1}", "\"nope\""];

fn write(value: &Value, seed: &mut u64, rate: u64, out: &mut String) {
    match value {
        Value::Object(map) => {
            if next(seed) % (rate * 4) == 0 {
                // the object as an array of its values
                out.push('[');
                for (i, v) in map.values().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(v, seed, rate, out);
                }
                out.push(']');
                return;
            }
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if !entries.is_empty() && next(seed) % 2 == 0 {
                let by = (next(seed) as usize) % entries.len();
                entries.rotate_left(by);
            }
            out.push('{');
            let mut first = true;
            let mut member = |out: &mut String, key: &str, text: &str| {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&serde_json::to_string(key).unwrap());
                out.push(':');
                out.push_str(text);
            };
            for (key, v) in entries {
                let roll = next(seed) % (rate * 8);
                let mut inner = String::new();
                write(v, seed, rate, &mut inner);
                match roll {
                    0 => {} // missing
                    1 => {
                        let odd = ODD[(next(seed) as usize) % ODD.len()];
                        member(out, key, odd);
                    }
                    2 => {
                        let odd = ODD[(next(seed) as usize) % ODD.len()];
                        member(out, key, odd);
                        member(out, key, &inner);
                    }
                    3 => {
                        member(out, key, &inner);
                        member(out, key, &inner);
                    }
                    4 => {
                        member(out, key, &inner);
                        member(out, "unknownMember", "1");
                    }
                    5 => {
                        let odd = ODD[(next(seed) as usize) % ODD.len()];
                        member(out, key, &inner);
                        member(out, key, odd);
                    }
                    _ => member(out, key, &inner),
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if next(seed) % (rate * 8) == 0 {
                    out.push_str(ODD[(next(seed) as usize) % ODD.len()]);
                } else {
                    write(item, seed, rate, out);
                }
            }
            out.push(']');
        }
        Value::String(s) if next(seed) % (rate * 8) == 0 => {
            let _ = s;
            out.push_str("\"nope\"");
        }
        other => out.push_str(&other.to_string()),
    }
}

fn outcome<T: Serialize>(r: Result<T, serde_json::Error>) -> String {
    match r {
        Ok(v) => format!("ok {}", serde_json::to_string(&v).unwrap()),
        Err(e) => format!("err {e}"),
    }
}

fn run<T>(name: &str, cases: usize, out: &mut String)
where
    T: proptest::arbitrary::Arbitrary + Serialize + DeserializeOwned,
{
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::arbitrary::any::<T>();
    let mut seed = name.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    for case in 0..cases {
        let value = strategy.new_tree(&mut runner).unwrap().current();
        let json = serde_json::to_value(&value).unwrap();
        for rate in [1u64, 2, 4, 1000] {
            let mut text = String::new();
            write(&json, &mut seed, rate, &mut text);
            let from_text = outcome(serde_json::from_str::<T>(&text));
            let from_value = match serde_json::from_str::<Value>(&text) {
                Ok(v) => outcome(serde_json::from_value::<T>(v)),
                Err(e) => format!("not json {e}"),
            };
            let from_slice_value = match serde_json::from_str::<Value>(&text) {
                Ok(v) => outcome(T::deserialize(&v)),
                Err(e) => format!("not json {e}"),
            };
            let _ = writeln!(out, "{name}\t{case}\t{rate}\t{text}\n\ttext: {from_text}\n\tvalue: {from_value}\n\t&value: {from_slice_value}");
        }
    }
}

fn main() {
    let cases: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(24);
    let mut out = String::new();
    macro_rules! each {
        ($ty:ident, $name:literal) => {
            run::<$ty>($name, cases, &mut out);
        };
    }
    bridge_contract::every_component!(each);
    print!("{out}");
}
