//! [`DateString`]: the schema's `type: string, format: date-time`, an instant with millisecond precision
//! decoded like Effect's `Schema.Date` (JavaScript's `new Date(string)`, invalid dates rejected) and
//! encoded like JavaScript's `Date.prototype.toISOString()`. The accepted forms are listed on the type.

use std::fmt;
use std::str::FromStr;

use arrayvec::ArrayString;
use chrono::{DateTime, Utc};

use super::js::json_quote;

/// JavaScript's date range: at most 8.64e15 ms (100 000 000 days) either side of the epoch.
const MAX_MILLIS: i64 = 8_640_000_000_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;

/// An instant in JavaScript's date range, with millisecond precision, carried as a JSON string.
///
/// Encoding ([`fmt::Display`], [`serde::Serialize`]) is JavaScript's `toISOString()`:
/// `2026-01-02T03:04:05.678Z`, with years outside 0000–9999 written `+YYYYYY` / `-YYYYYY`. Ordering,
/// equality and hashing follow the instant. Decoding ([`FromStr`], [`serde::Deserialize`]) accepts the
/// strings below.
///
/// # Accepted strings
///
/// Every form below gives the same instant as `new Date(s)` in Node.js (V8) running with `TZ=UTC`, as
/// the service does; the test suite pins a table of Node's answers. A form without a time zone is read
/// as UTC (JavaScript reads date-time forms without an offset as local time, which is UTC for the
/// service). Letters are case-insensitive. Anything else is rejected, including strings V8 accepts only
/// through its implementation-defined fallback parser (`"2026/01/02"`, `"2026-1-2"`, `"Jan 2, 2026"`,
/// surrounding blanks, `"2026-01-02Z"`, `"-000000-01-01"`, offsets beyond 23:59, one-digit hours).
///
/// 1. **ECMAScript date-time string format** (with V8's `±HHmm` offset extension):
///    `YYYY`, `YYYY-MM` or `YYYY-MM-DD`, where `YYYY` is four digits or an expanded year `+YYYYYY` /
///    `-YYYYYY` (six digits; `-000000` is rejected); optionally followed by `T`, `HH:mm`, optional `:ss`,
///    optional (only after seconds) `.` and one or more fraction digits, then optionally `Z`, `±HH:mm` or
///    `±HHmm`. Date-only forms are UTC.
/// 2. **The same with a space instead of `T`** (`2026-01-02 03:04:05Z`), a common V8 extension. V8 reads
///    it with its legacy parser, whose quirks are reproduced: a year from 0 to 49 means 2000–2049 and
///    from 50 to 99 means 1950–1999 (`0049-01-02 00:00Z` is 2049-01-02), and a year from 1 to 31 makes the
///    numbers month-day-year (`0005-01-02 00:00Z` is 2002-05-01).
/// 3. **RFC 2822 / `toUTCString()`**: `[Www, ]D Mon YYYY[ HH:mm[:ss][ zone]]`, for example
///    `Fri, 02 Jan 2026 03:04:05 GMT`.
/// 4. **`toString()` / `toDateString()`**: `[Www ]Mon D YYYY[ HH:mm[:ss][ zone[ (text)]]]`, for example
///    `Fri Jan 02 2026 03:04:05 GMT+0000 (Coordinated Universal Time)`.
///
/// In forms 3 and 4: `Www` is an English weekday name (`Fri` or `Friday`), not checked against the date
/// (V8 ignores it); `Mon` is a month as V8 reads it, any word whose first three letters are an English
/// month's (`Jan`, `January`, `Sept`); `D` is one or two digits; `YYYY` is four to six digits, with the
/// two-digit-year reading of form 2 (`02 Jan 0049` is 2049); `zone` is `GMT`, `UTC`, `UT` or `Z`,
/// optionally followed by `±HHmm` or `±HH:mm` (`GMT+0100`), or such an offset alone, or one of the
/// North American zones `EST` `EDT` `CST` `CDT` `MST` `MDT` `PST` `PDT`; `(text)` is any text without
/// parentheses.
///
/// In all forms: months 01–12; days 01–31, where a day past the end of its month rolls over into the
/// next month as in V8 (`2026-02-30` is 2026-03-02); hours 00–24, where 24 is accepted only as `24:00`
/// with zero seconds and fraction, meaning the next midnight; minutes and seconds 00–59; offsets up to
/// 23:59. Fraction digits beyond milliseconds are dropped by V8's own algorithm, which keeps at most nine
/// significant digits and caps the length at nine, so a fraction with leading zeros and more than nine
/// digits differs from plain truncation (`.0123456789` is 123 ms, as in Node). The instant must lie
/// within JavaScript's date range, ±8.64e15 ms around 1970-01-01T00:00:00Z.
///
/// Representation: the instant (milliseconds since the epoch), parsed once when the value is decoded or built,
/// and its `toISOString()` text, written then too (a string that already is that text is kept as it came), so
/// that encoding a value is handing over its text. Both are inline: the type is `Copy`.
#[derive(Clone, Copy)]
pub struct DateString {
    millis: i64,
    /// `toISOString()` of `millis`; empty in the constants [`DateString::MIN`] and [`DateString::MAX`], whose text
    /// is written when they are encoded.
    iso: ArrayString<27>,
}

impl PartialEq for DateString {
    fn eq(&self, other: &Self) -> bool {
        self.millis == other.millis
    }
}

impl Eq for DateString {}

impl PartialOrd for DateString {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DateString {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.millis.cmp(&other.millis)
    }
}

impl std::hash::Hash for DateString {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.millis.hash(state);
    }
}

/// The input of [`DateString::from_str`] is not an accepted date string (or lies outside JavaScript's
/// date range). Its `Display` is `invalid date string "<input>"`, with the input JSON-escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDateStringError {
    input: String,
}

impl ParseDateStringError {
    /// The rejected input.
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseDateStringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid date string {}", json_quote(&self.input))
    }
}

impl std::error::Error for ParseDateStringError {}

impl DateString {
    /// The earliest instant JavaScript can represent: `-271821-04-20T00:00:00.000Z`.
    pub const MIN: Self = Self { millis: -MAX_MILLIS, iso: ArrayString::new_const() };
    /// The latest instant JavaScript can represent: `+275760-09-13T00:00:00.000Z`.
    pub const MAX: Self = Self { millis: MAX_MILLIS, iso: ArrayString::new_const() };

    /// The instant `millis` milliseconds after 1970-01-01T00:00:00Z, or `None` outside JavaScript's
    /// date range (±8.64e15 ms).
    pub fn from_millis(millis: i64) -> Option<Self> {
        (-MAX_MILLIS..=MAX_MILLIS).contains(&millis).then(|| Self { millis, iso: iso(millis) })
    }

    /// Milliseconds since 1970-01-01T00:00:00Z (JavaScript's `getTime()`).
    pub fn millis(self) -> i64 {
        self.millis
    }

    /// The same instant as a chrono `DateTime<Utc>`, or `None` for instants beyond chrono's range
    /// (years after +262142 or before -262143), which JavaScript's range exceeds slightly.
    pub fn to_chrono(self) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp_millis(self.millis)
    }
}

impl From<DateTime<Utc>> for DateString {
    /// Drops the sub-millisecond part (rounding toward the past, like `timestamp_millis`). chrono's range
    /// lies inside JavaScript's, so every `DateTime<Utc>` converts.
    fn from(value: DateTime<Utc>) -> Self {
        let millis = value.timestamp_millis();
        Self { millis, iso: iso(millis) }
    }
}

impl FromStr for DateString {
    type Err = ParseDateStringError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(millis) = parse_iso_string(s) {
            // Already `toISOString()`'s text: kept as it came.
            let iso = ArrayString::from(s).unwrap_or_else(|_| iso(millis));
            return Ok(Self { millis, iso });
        }
        parse(s).and_then(Self::from_millis).ok_or_else(|| ParseDateStringError { input: s.to_owned() })
    }
}

/// `Date.prototype.toISOString()` of an instant in JavaScript's range.
pub(super) fn iso(millis: i64) -> ArrayString<27> {
    use fmt::Write as _;
    /// `value` in `width` digits, with leading zeros.
    fn number(text: &mut ArrayString<27>, value: u64, width: u32) {
        for place in (0..width).rev() {
            let digit = value / 10u64.pow(place) % 10;
            let _ = text.write_char(char::from(b'0' + digit as u8));
        }
    }
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let ms_of_day = millis.rem_euclid(MILLIS_PER_DAY) as u64;
    let (year, month, day) = civil_from_days(days);
    let mut text = ArrayString::<27>::new();
    if (0..=9999).contains(&year) {
        number(&mut text, year as u64, 4);
    } else {
        let _ = text.write_char(if year < 0 { '-' } else { '+' });
        number(&mut text, year.unsigned_abs(), 6);
    }
    let parts = [
        ('-', month as u64, 2),
        ('-', day as u64, 2),
        ('T', ms_of_day / 3_600_000, 2),
        (':', ms_of_day / 60_000 % 60, 2),
        (':', ms_of_day / 1000 % 60, 2),
        ('.', ms_of_day % 1000, 3),
    ];
    for (separator, value, width) in parts {
        let _ = text.write_char(separator);
        number(&mut text, value, width);
    }
    let _ = text.write_char('Z');
    text
}

impl DateString {
    /// `toISOString()`: the text held, or (for the constants) written now.
    fn iso(&self) -> ArrayString<27> {
        if self.iso.is_empty() {
            iso(self.millis)
        } else {
            self.iso
        }
    }
}

impl fmt::Display for DateString {
    /// `Date.prototype.toISOString()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.iso())
    }
}

impl fmt::Debug for DateString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DateString").field(&format_args!("{self}")).finish()
    }
}

impl serde::Serialize for DateString {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.iso())
    }
}

impl<'de> serde::Deserialize<'de> for DateString {
    /// Accepts a string that [`FromStr`] accepts; the error for a bad string is
    /// `invalid date string "<input>"`, for any other JSON value `Expected string, actual <value>`.
    // Not inlined: a struct with many scalar members calls one copy instead of carrying one per member (decoding
    // was bound by instruction-cache misses, docs/performance.md).
    #[inline(never)]
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        super::js::with_str(deserializer, str::parse::<Self>)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for DateString {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DateString".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::DateString").into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
        })
    }
}

#[cfg(feature = "proptest")]
impl proptest::arbitrary::Arbitrary for DateString {
    type Parameters = ();
    type Strategy = proptest::strategy::BoxedStrategy<Self>;

    /// Instants that RFC 3339 (the schema's `format: date-time`) can write, years 0000–9999, with a dense band
    /// over 2000–2100. Extended years (`+275760-09-13T00:00:00.000Z`) encode and decode too, but are not
    /// `date-time`s; the snapshot tests cover them.
    fn arbitrary_with(_: ()) -> Self::Strategy {
        use proptest::prelude::*;
        const Y0000: i64 = -62_167_219_200_000;
        const Y10000: i64 = 253_402_300_800_000;
        const Y2000: i64 = 946_684_800_000;
        const Y2100: i64 = 4_102_444_800_000;
        prop_oneof![
            1 => Y0000..Y10000,
            3 => Y2000..Y2100,
            1 => prop_oneof![Just(Y0000), Just(Y10000 - 1), Just(0), Just(-1)],
        ]
        .prop_map(|millis| Self::from_millis(millis).expect("strategies stay in range"))
        .boxed()
    }
}

// ---------------------------------------------------------------------------------------------------
// Calendar arithmetic (proleptic Gregorian, astronomical years: year 0 is 1 BC).

/// Days from 1970-01-01 to `year-month-01` plus `day - 1` days (so days past the month end roll over).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 + (day - 1)
}

/// The civil date of a day number (days since 1970-01-01).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

// ---------------------------------------------------------------------------------------------------
// Parsing.

/// The fields read from a date string, before they become an instant.
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    millis: i64,
    /// Offset east of UTC in minutes; `None` reads the time as UTC.
    offset_minutes: Option<i64>,
}

impl Fields {
    fn date(year: i64, month: i64, day: i64) -> Self {
        Self { year, month, day, hour: 0, minute: 0, second: 0, millis: 0, offset_minutes: None }
    }

    /// V8's legacy parser reads years 0–49 as 2000–2049 and 50–99 as 1950–1999.
    fn apply_legacy_two_digit_year(&mut self) {
        match self.year {
            0..=49 => self.year += 2000,
            50..=99 => self.year += 1900,
            _ => {}
        }
    }

    fn to_millis(&self) -> Option<i64> {
        let days = days_from_civil(self.year, self.month, self.day);
        let time = ((self.hour * 60 + self.minute) * 60 + self.second) * 1000 + self.millis;
        let millis = days * MILLIS_PER_DAY + time - self.offset_minutes.unwrap_or(0) * 60_000;
        (-MAX_MILLIS..=MAX_MILLIS).contains(&millis).then_some(millis)
    }
}

/// A cursor over the bytes of the input.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Self { bytes: s.as_bytes(), at: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    fn eat_any(&mut self, bytes: &[u8]) -> Option<u8> {
        let b = self.peek().filter(|b| bytes.contains(b))?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// A run of ASCII digits (possibly empty).
    fn digit_run(&mut self) -> &'a [u8] {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        &self.bytes[start..self.at]
    }

    /// Between `min` and `max` ASCII digits (and no more), as a number.
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let run = self.digit_run();
        if run.len() < min || run.len() > max {
            return None;
        }
        Some(run.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    }

    /// A run of ASCII letters, lower-cased.
    fn word(&mut self) -> String {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.at += 1;
        }
        self.bytes[start..self.at].iter().map(|b| b.to_ascii_lowercase() as char).collect()
    }
}

/// Milliseconds of fraction digits, by V8's `ReadMilliseconds`: the numeral keeps its first nine
/// significant digits; its length (leading zeros included) is capped at nine before scaling to three.
fn v8_milliseconds(fraction: &[u8]) -> i64 {
    let significant = &fraction[fraction.iter().take_while(|d| **d == b'0').count()..];
    let mut n = significant.iter().take(9).fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    match fraction.len() {
        1 => n *= 100,
        2 => n *= 10,
        3 => {}
        len => n /= 10i64.pow(len.min(9) as u32 - 3),
    }
    n
}

/// `true` when the fraction digits are all zero (V8's ISO parser checks the numeral for `24:00`).
fn fraction_is_zero(fraction: &[u8]) -> bool {
    fraction.iter().all(|d| *d == b'0')
}

/// Parses a date string into milliseconds since the epoch (range checked by the caller too).
pub(super) fn parse(s: &str) -> Option<i64> {
    parse_iso(s).or_else(|| parse_named_month(s))?.to_millis()
}

/// Exactly what `toISOString()` writes for years 0000–9999 (`2026-01-02T03:04:05.678Z`), read without the
/// general parser, to the same instant [`parse_iso`] gives. Anything else, hour 24 and days past the end of their
/// month (which roll over, so that the text is not the instant's `toISOString()`) included, is left to it.
fn parse_iso_string(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0i64, |n, d| d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0')))
    };
    let (year, month) = (number(0, 4)?, number(5, 7).filter(|m| (1..=12).contains(m))?);
    let month_days = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let mut fields = Fields::date(year, month, number(8, 10).filter(|d| (1..=month_days).contains(d))?);
    fields.hour = number(11, 13).filter(|h| (0..=23).contains(h))?;
    fields.minute = number(14, 16).filter(|m| (0..=59).contains(m))?;
    fields.second = number(17, 19).filter(|s| (0..=59).contains(s))?;
    fields.millis = number(20, 23)?;
    fields.offset_minutes = Some(0);
    fields.to_millis()
}

/// Forms 1 and 2: the ECMAScript format, with `T`, `t` or a space before the time.
fn parse_iso(s: &str) -> Option<Fields> {
    let mut c = Cursor::new(s);
    let year = match c.eat_any(b"+-") {
        Some(sign) => {
            let year = c.digits(6, 6)?;
            if sign == b'-' && year == 0 {
                return None;
            }
            if sign == b'-' {
                -year
            } else {
                year
            }
        }
        None => c.digits(4, 4)?,
    };
    let mut fields = Fields::date(year, 1, 1);
    if c.eat(b'-') {
        fields.month = c.digits(2, 2).filter(|m| (1..=12).contains(m))?;
        if c.eat(b'-') {
            fields.day = c.digits(2, 2).filter(|d| (1..=31).contains(d))?;
        }
    }
    if c.at_end() {
        fields.offset_minutes = Some(0);
        return Some(fields);
    }
    let legacy = c.eat_any(b"Tt ")? == b' ';
    fields.hour = c.digits(2, 2).filter(|h| (0..=24).contains(h))?;
    c.expect(b':')?;
    fields.minute = c.digits(2, 2).filter(|m| (0..=59).contains(m))?;
    let mut fraction_zero = true;
    if c.eat(b':') {
        fields.second = c.digits(2, 2).filter(|s| (0..=59).contains(s))?;
        if c.eat(b'.') {
            let fraction = c.digit_run();
            if fraction.is_empty() {
                return None;
            }
            fields.millis = v8_milliseconds(fraction);
            fraction_zero = fraction_is_zero(fraction);
        }
    }
    // 24:00 only with zero minutes, seconds and fraction. V8's ISO parser tests the fraction's digits,
    // its legacy parser (space form) the resulting milliseconds.
    let fraction_ok = if legacy { fields.millis == 0 } else { fraction_zero };
    if fields.hour == 24 && (fields.minute != 0 || fields.second != 0 || !fraction_ok) {
        return None;
    }
    if c.eat_any(b"Zz").is_some() {
        fields.offset_minutes = Some(0);
    } else if let Some(sign) = c.eat_any(b"+-") {
        fields.offset_minutes = Some(parse_offset(&mut c, sign)?);
    }
    if !c.at_end() {
        return None;
    }
    if legacy {
        // V8's legacy parser takes numeric dates as year-month-day only when the first number cannot be
        // a day; a year from 1 to 31 makes it month-day-year (`0005-01-02` is 2002-05-01).
        if (1..=31).contains(&fields.year) {
            (fields.month, fields.day, fields.year) = (fields.year, fields.month, fields.day);
            if fields.month > 12 {
                return None;
            }
        }
        fields.apply_legacy_two_digit_year();
    }
    Some(fields)
}

/// The `hh:mm` or `hhmm` after an offset's sign, as minutes east of UTC (hours 00–23, minutes 00–59).
fn parse_offset(c: &mut Cursor<'_>, sign: u8) -> Option<i64> {
    let (hours, minutes) = match c.digit_run() {
        [h1, h2, m1, m2] => (two_digits(*h1, *h2), two_digits(*m1, *m2)),
        [h1, h2] => {
            c.expect(b':')?;
            (two_digits(*h1, *h2), c.digits(2, 2)?)
        }
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    let total = hours * 60 + minutes;
    Some(if sign == b'-' { -total } else { total })
}

fn two_digits(tens: u8, ones: u8) -> i64 {
    i64::from(tens - b'0') * 10 + i64::from(ones - b'0')
}

const WEEKDAYS: [&str; 7] = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// `Fri` or `Friday` (any case).
fn is_weekday(word: &str) -> bool {
    WEEKDAYS.iter().any(|w| word == *w || word == &w[..3])
}

/// A month name as V8 reads it: any word whose first three letters are a month's (`Jan`, `January`,
/// `Sept`, any case), as 1–12.
fn month_number(word: &str) -> Option<i64> {
    let prefix = word.get(..3)?;
    MONTHS.iter().position(|m| prefix == &m[..3]).map(|i| i as i64 + 1)
}

/// Forms 3 and 4: RFC 2822 / `toUTCString()` and `toString()` / `toDateString()`.
fn parse_named_month(s: &str) -> Option<Fields> {
    let mut c = Cursor::new(s);
    let mut word = c.word();
    let mut rfc_weekday = false;
    if is_weekday(&word) {
        if c.eat(b',') {
            rfc_weekday = true;
        }
        c.expect(b' ')?;
        word = c.word();
    }
    let (month, day) = if word.is_empty() {
        // Form 3: D Mon YYYY.
        let day = c.digits(1, 2)?;
        c.expect(b' ')?;
        (month_number(&c.word())?, day)
    } else {
        // Form 4: Mon D YYYY (a weekday before it is not followed by a comma).
        if rfc_weekday {
            return None;
        }
        let month = month_number(&word)?;
        c.expect(b' ')?;
        (month, c.digits(1, 2)?)
    };
    if !(1..=31).contains(&day) {
        return None;
    }
    let form4 = !word.is_empty();
    c.expect(b' ')?;
    let year = c.digits(4, 6)?;
    let mut fields = Fields::date(year, month, day);
    fields.apply_legacy_two_digit_year();
    if c.at_end() {
        return Some(fields);
    }
    c.expect(b' ')?;
    fields.hour = c.digits(2, 2).filter(|h| (0..=24).contains(h))?;
    c.expect(b':')?;
    fields.minute = c.digits(2, 2).filter(|m| (0..=59).contains(m))?;
    if c.eat(b':') {
        fields.second = c.digits(2, 2).filter(|s| (0..=59).contains(s))?;
    }
    if fields.hour == 24 && (fields.minute != 0 || fields.second != 0) {
        return None;
    }
    if c.at_end() {
        return Some(fields);
    }
    c.expect(b' ')?;
    fields.offset_minutes = Some(parse_zone(&mut c)?);
    if form4 && c.eat(b' ') {
        c.expect(b'(')?;
        while c.peek().is_some_and(|b| b != b'(' && b != b')') {
            c.at += 1;
        }
        c.expect(b')')?;
    }
    c.at_end().then_some(fields)
}

/// `GMT`, `UTC`, `UT`, `Z`, each optionally followed by `±hhmm`; `±hhmm`; or a North American zone.
fn parse_zone(c: &mut Cursor<'_>) -> Option<i64> {
    let word = c.word();
    let base = match word.as_str() {
        "gmt" | "utc" | "ut" | "z" | "" => 0,
        "edt" => return Some(-4 * 60),
        "est" | "cdt" => return Some(-5 * 60),
        "cst" | "mdt" => return Some(-6 * 60),
        "mst" | "pdt" => return Some(-7 * 60),
        "pst" => return Some(-8 * 60),
        _ => return None,
    };
    match c.eat_any(b"+-") {
        Some(sign) => parse_offset(c, sign),
        None if word.is_empty() => None,
        None => Some(base),
    }
}
