//! `pattern` checks: each distinct pattern of the schema is compiled once, on first use.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;

pub fn matches(pattern: &'static str, s: &str) -> bool {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, Regex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let regex = cache
        .entry(pattern)
        .or_insert_with(|| Regex::new(pattern).unwrap_or_else(|e| panic!("schema pattern {pattern} compiles: {e}")));
    regex.is_match(s)
}
