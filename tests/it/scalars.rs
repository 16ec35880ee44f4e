//! Tests of the hand-written scalars (`DecimalString`, `DecimalNumber`, `DateString`): decode and encode
//! tables pinned by insta snapshots and checked against the answers of the reference runtime (Node.js
//! 20 / V8 with `TZ=UTC`, recorded once and committed below as data), plus property tests.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use bridge_contract::scalars::{
    js_number_to_string, DateString, DecimalNumber, DecimalRangeErrorKind, DecimalString, DECIMAL_STRING_PATTERN,
};
use proptest::prelude::*;
use rust_decimal::Decimal;

/// Property-test settings: failures are reported with their minimal input instead of being written
/// to a regressions file next to this one.
fn config() -> ProptestConfig {
    ProptestConfig { failure_persistence: None, ..ProptestConfig::default() }
}

/// JSON string literal, for unambiguous table rows.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

// ===================================================================================================
// DecimalString

/// Accepted inputs and their encoding (Effect-TS `BigDecimal.fromString` accepts each of them).
const DECIMAL_ACCEPTED: &[(&str, &str)] = &[
    ("", "0"),
    ("0", "0"),
    ("1", "1"),
    ("-1", "-1"),
    ("+1", "1"),
    ("1.", "1"),
    (".5", "0.5"),
    ("-.5", "-0.5"),
    ("+.5", "0.5"),
    ("1.50", "1.50"),
    ("-0", "0"),
    ("-0.00", "0.00"),
    ("0.000", "0.000"),
    ("007", "7"),
    ("00.100", "0.100"),
    ("1e5", "100000"),
    ("1E+5", "100000"),
    ("1e-3", "0.001"),
    ("1.5e-3", "0.0015"),
    ("1.5e3", "1500"),
    ("15e-1", "1.5"),
    ("1e0", "1"),
    ("1e-0", "1"),
    ("1e+0005", "100000"),
    ("0e5", "0"),
    ("0e-5", "0.00000"),
    ("-1.5E-2", "-0.015"),
    ("1000000000000.123456789012345678", "1000000000000.123456789012345678"),
    ("1000000000000000000000000000000000", "1000000000000000000000000000000000"),
    (
        "115792089237316195423570985008687907853269984665640564039457584007913129639935",
        "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    ),
    ("12345678901234567890.12345678901234567890", "12345678901234567890.12345678901234567890"),
    ("1e100", "10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"),
    ("1e101", "1e+101"),
    (
        "1e-100",
        "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
    ),
    ("1e-101", "1e-101"),
    ("1.23e-200", "1.23e-200"),
    ("-4.50e300", "-4.50e+300"),
    ("0e-1000", "0e-1000"),
    ("1e9000000000000", "1e+9000000000000"),
    ("-1e-9000000000000", "-1e-9000000000000"),
    ("1e9007199254740991", "1e+9007199254740991"),
    // Effect quirk: the sign may follow a leading dot, and counts as a fraction digit.
    (".+5", "0.05"),
    (".-5", "-0.05"),
];

/// Rejected inputs (Effect-TS `BigDecimal.fromString` gives `None` for each of them).
const DECIMAL_REJECTED: &[&str] = &[
    " 1",
    "1 ",
    "0x10",
    "NaN",
    "Infinity",
    "-Infinity",
    "1_000",
    ".",
    "-",
    "+",
    "e5",
    "E5",
    "1e",
    "1e+",
    "1e-",
    "1e5.5",
    "1.2.3",
    "--1",
    "+-1",
    "-+1",
    "1-",
    "1,5",
    "abc",
    "1\n",
    "-.",
    ".e1",
    "1e1e1",
    "0b1",
    "1e 5",
    "\u{2212}1",
    "\u{661}",
    "\u{ff11}",
    "1e9007199254740992",
    "1e99999999999999999999",
    "1.5e-9007199254740991",
    "-.-5",
];

/// Inputs where the published `pattern` and Effect's parser disagree (see `DECIMAL_STRING_PATTERN`).
const PATTERN_DISAGREES: &[&str] =
    &[".+5", ".-5", "1e9007199254740992", "1e99999999999999999999", "1.5e-9007199254740991"];

/// Values around `rust_decimal::Decimal`'s limits (96-bit mantissa, scale 28).
const TO_DECIMAL_CASES: &[&str] = &[
    "0",
    "-0.00",
    "0e-40",
    "0e40",
    "1.50",
    "1e5",
    "-123.456",
    "79228162514264337593543950335",
    "-79228162514264337593543950335",
    "79228162514264337593543950336",
    "7.9228162514264337593543950335",
    "0.0000000000000000000000000001",
    "0.00000000000000000000000000001",
    "0.00000000000000000000000000010",
    "1.0000000000000000000000000000000",
    "10.0000000000000000000000000000",
    "1e28",
    "1e29",
    "123456789.123456789012345678",
    "1000000000000.123456789012345678",
    "1000000000000000000000000000000000",
    "1e9000000000000",
    "1e-9000000000000",
];

#[test]
fn decimal_string_table() {
    let mut out = String::new();
    writeln!(out, "# accepted: input -> (sign, digits, scale) -> encoding").unwrap();
    for (input, encoding) in DECIMAL_ACCEPTED {
        let x: DecimalString = input.parse().unwrap_or_else(|e| panic!("{input:?} must be accepted: {e}"));
        assert_eq!(x.to_string(), *encoding, "encoding of {input:?}");
        // Encoding is stable and decodes to the same value.
        let again: DecimalString = encoding.parse().unwrap();
        assert_eq!(again.cmp_numeric(&x), Ordering::Equal, "{input:?}");
        assert_eq!(again.to_string(), *encoding);
        let sign = if x.is_negative() { "-" } else { "+" };
        writeln!(out, "{} -> ({sign}, {}, {}) -> {}", q(input), x.digits(), x.scale(), q(&x.to_string())).unwrap();
    }
    writeln!(out, "\n# rejected: input -> error").unwrap();
    for input in DECIMAL_REJECTED {
        let err = input.parse::<DecimalString>().expect_err(input);
        assert_eq!(err.to_string(), format!("Unable to decode {} into a BigDecimal", q(input)));
        assert_eq!(err.input(), *input);
        writeln!(out, "{} -> {err}", q(input)).unwrap();
    }
    writeln!(out, "\n# to_decimal: input -> Decimal (scale) | error").unwrap();
    for input in TO_DECIMAL_CASES {
        let x: DecimalString = input.parse().unwrap();
        match x.to_decimal() {
            Ok(d) => {
                assert_eq!(DecimalString::from(d).cmp_numeric(&x), Ordering::Equal, "{input}");
                writeln!(out, "{} -> {d} (scale {})", q(input), d.scale()).unwrap();
            }
            Err(e) => writeln!(out, "{} -> error: {e}", q(input)).unwrap(),
        }
    }
    writeln!(out, "\n# serde: JSON -> result").unwrap();
    for json in [
        r#""1.50""#,
        r#""1e5""#,
        r#""""#,
        r#""abc""#,
        r#"" 1""#,
        "1",
        "1.50",
        "1e21",
        "-0",
        "true",
        "null",
        r#"["1"]"#,
        r#"{"b":1,"a":[true,null],"2":"x","1":0,"b":2}"#,
        r#""a\"b\n""#,
    ] {
        let result = match serde_json::from_str::<DecimalString>(json) {
            Ok(x) => format!("ok {}", serde_json::to_string(&x).unwrap()),
            Err(e) => format!("error: {e}"),
        };
        writeln!(out, "{json} -> {result}").unwrap();
    }
    insta::assert_snapshot!("decimal_string", out);
}

#[test]
fn decimal_string_byte_identical_round_trips() {
    for s in ["1000000000000.123456789012345678", "1000000000000000000000000000000000", "1.50", "-0.001", "0.00", "123"]
    {
        let x: DecimalString = s.parse().unwrap();
        assert_eq!(x.to_string(), s);
        assert_eq!(serde_json::to_string(&x).unwrap(), format!("\"{s}\""));
    }
}

#[test]
fn decimal_string_structure_and_order() {
    let d = |s: &str| s.parse::<DecimalString>().unwrap();
    assert_ne!(d("1.5"), d("1.50"));
    assert_eq!(d("1.5").cmp_numeric(&d("1.50")), Ordering::Equal);
    assert_eq!(d("1e5").cmp_numeric(&d("100000")), Ordering::Equal);
    assert_eq!(d("-0.00"), d("0.00"));
    assert!(!d("-0").is_negative() && d("-0").is_zero());
    assert_eq!(d("1e5").digits(), "1");
    assert_eq!(d("1e5").scale(), -5);
    assert_eq!(d("1.50").scale(), 2);
    let ordered = [
        "-1e+9000000000000",
        "-2",
        "-1.5",
        "-1",
        "-0.001",
        "0",
        "0.0001",
        "0.001",
        "1",
        "1.05",
        "1.5",
        "10",
        "1e9000000000000",
    ];
    for (i, a) in ordered.iter().enumerate() {
        for (j, b) in ordered.iter().enumerate() {
            assert_eq!(d(a).cmp_numeric(&d(b)), i.cmp(&j), "{a} vs {b}");
        }
    }
    assert_eq!(DecimalString::zero(), d(""));
}

#[test]
fn decimal_string_rust_decimal_interop() {
    let dec = |s: &str| Decimal::from_str_exact(s).unwrap();
    // From<Decimal> keeps the scale.
    for s in ["1.50", "-0.001", "0", "0.000", "79228162514264337593543950335", "0.0000000000000000000000000001"] {
        let x = DecimalString::from(dec(s));
        assert_eq!(x.to_string(), s);
        assert_eq!(Decimal::try_from(&x).unwrap().to_string(), s);
    }
    let x: DecimalString = "1e29".parse().unwrap();
    let err = x.to_decimal().unwrap_err();
    assert_eq!(err.kind(), DecimalRangeErrorKind::TooManyDigits { needed: 30 });
    assert_eq!(err.value(), "100000000000000000000000000000");
    assert!(err.to_string().contains("96-bit"), "{err}");
    let x: DecimalString = "1.00000000000000000000000000001".parse().unwrap();
    let err = Decimal::try_from(x).unwrap_err();
    assert_eq!(err.kind(), DecimalRangeErrorKind::TooManyDecimalPlaces { needed: 29 });
    assert!(err.to_string().contains("29 decimal places"), "{err}");
    // Trailing zeros go only as far as needed.
    let x: DecimalString = "2.500000000000000000000000000000".parse().unwrap();
    assert_eq!(x.to_decimal().unwrap().scale(), 28);
}

#[test]
fn decimal_string_pattern_agrees_with_parser() {
    let schema = serde_json::json!({"type": "string", "pattern": DECIMAL_STRING_PATTERN});
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut disagreements = BTreeSet::new();
    let inputs = DECIMAL_ACCEPTED.iter().map(|(i, _)| *i).chain(DECIMAL_REJECTED.iter().copied());
    for input in inputs {
        let by_pattern = validator.is_valid(&serde_json::Value::from(input));
        let by_parser = input.parse::<DecimalString>().is_ok();
        if by_pattern != by_parser {
            disagreements.insert(input);
        }
    }
    assert_eq!(disagreements, PATTERN_DISAGREES.iter().copied().collect::<BTreeSet<_>>());
}

#[test]
fn json_schemas() {
    use schemars::JsonSchema;
    let mut generator = schemars::SchemaGenerator::default();
    assert_eq!(
        DecimalString::json_schema(&mut generator).to_value(),
        serde_json::json!({
            "type": "string",
            "format": "decimal-string",
            "pattern": "^([+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?)?$",
        })
    );
    assert_eq!(
        DecimalNumber::json_schema(&mut generator).to_value(),
        serde_json::json!({"type": "number", "format": "decimal-number"})
    );
    assert_eq!(
        DateString::json_schema(&mut generator).to_value(),
        serde_json::json!({"type": "string", "format": "date-time"})
    );
}

#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct Amounts {
    amount: DecimalString,
    fee: DecimalString,
}

/// Decimal strings of any digits and exponent, through the parser.
fn decimal_strings_any_exponent() -> impl Strategy<Value = DecimalString> {
    (any::<bool>(), "[0-9]{1,45}", prop_oneof![-150i64..150, -9_000_000_000_000i64..9_000_000_000_000]).prop_map(
        |(negative, digits, exponent)| {
            format!("{}{digits}e{exponent}", if negative { "-" } else { "" }).parse().unwrap()
        },
    )
}

/// Decimal strings near `rust_decimal::Decimal`'s limits.
fn decimal_strings_near_limits() -> impl Strategy<Value = DecimalString> {
    prop_oneof![
        any::<DecimalString>(),
        (any::<bool>(), "[1-9][0-9]{0,31}", "0{0,6}", -35i64..=45).prop_map(|(negative, digits, zeros, scale)| {
            format!("{}{digits}{zeros}e{}", if negative { "-" } else { "" }, -scale).parse().unwrap()
        }),
    ]
}

/// Positional text of a value with trailing fraction zeros removed (the oracle's input).
fn normalized_positional(x: &DecimalString) -> Option<String> {
    let text = x.to_string();
    if text.contains('e') {
        return None;
    }
    Some(if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn decimal_string_encode_decode_identity(x in any::<DecimalString>()) {
        let text = x.to_string();
        let back: DecimalString = text.parse().unwrap();
        prop_assert_eq!(&back, &x);
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn decimal_string_any_exponent_round_trip(x in decimal_strings_any_exponent()) {
        let text = x.to_string();
        prop_assert!(text.len() <= x.digits().len() + 120, "bounded encoding: {}", text.len());
        let back: DecimalString = text.parse().unwrap();
        prop_assert_eq!(back.cmp_numeric(&x), Ordering::Equal);
        prop_assert_eq!(back.to_string(), text.clone());
        if x.scale() >= 0 || text.contains('e') {
            prop_assert_eq!(back, x);
        }
    }

    #[test]
    fn decimal_string_serde_json_object_round_trip(amount in any::<DecimalString>(), fee in decimal_strings_any_exponent()) {
        let value = Amounts { amount: amount.clone(), fee: fee.clone() };
        let json = serde_json::to_string(&value).unwrap();
        prop_assert_eq!(&json, &format!(r#"{{"amount":"{amount}","fee":"{fee}"}}"#));
        let back: Amounts = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back.amount, &amount);
        prop_assert_eq!(back.fee.cmp_numeric(&fee), Ordering::Equal);
        let back: Amounts = serde_json::from_value(serde_json::to_value(&value).unwrap()).unwrap();
        prop_assert_eq!(back.amount, amount);
    }

    #[test]
    fn decimal_string_to_decimal_is_exact_or_errors(x in decimal_strings_near_limits()) {
        // Oracle: rust_decimal's own exact parser on the normalised positional text.
        let oracle = normalized_positional(&x).and_then(|t| Decimal::from_str_exact(&t).ok());
        match x.to_decimal() {
            Ok(d) => {
                let oracle = oracle.expect("to_decimal succeeded where the value does not fit");
                prop_assert_eq!(d, oracle);
                prop_assert_eq!(DecimalString::from(d).cmp_numeric(&x), Ordering::Equal);
                // Same digits and scale after normalisation.
                let normalized: DecimalString = normalized_positional(&x).unwrap().parse().unwrap();
                prop_assert_eq!(DecimalString::from(d.normalize()), normalized);
                // The scale is kept whenever the value fits with it.
                if (0..=28).contains(&x.scale()) && x.digits().parse::<u128>().is_ok_and(|m| m < 1 << 96) {
                    prop_assert_eq!(i64::from(d.scale()), x.scale());
                    prop_assert_eq!(d.mantissa().unsigned_abs().to_string(), x.digits());
                }
            }
            Err(e) => {
                prop_assert!(oracle.is_none(), "{} fits but to_decimal failed: {}", x, e);
                prop_assert_eq!(e.value(), x.to_string());
            }
        }
    }
}

// ===================================================================================================
// DecimalNumber

/// `String(Number(text))` in Node.js, for each text.
const JS_NUMBER_TO_STRING: &[(&str, &str)] = &[
    ("0", "0"),
    ("-0", "0"),
    ("1", "1"),
    ("-1", "-1"),
    ("1.5", "1.5"),
    ("-1.5", "-1.5"),
    ("100", "100"),
    ("123.456", "123.456"),
    ("0.1", "0.1"),
    ("0.2", "0.2"),
    ("0.30000000000000004", "0.30000000000000004"),
    ("1e21", "1e+21"),
    ("1e-7", "1e-7"),
    ("1e-6", "0.000001"),
    ("0.000001", "0.000001"),
    ("0.0000012", "0.0000012"),
    ("2.5e-7", "2.5e-7"),
    ("1.2345e21", "1.2345e+21"),
    ("999999999999999999999", "1e+21"),
    ("123456789012345680000", "123456789012345680000"),
    ("1e20", "100000000000000000000"),
    ("9007199254740991", "9007199254740991"),
    ("9007199254740992", "9007199254740992"),
    ("9007199254740993", "9007199254740992"),
    ("18014398509481984", "18014398509481984"),
    ("1152921504606846976", "1152921504606847000"),
    ("5e-324", "5e-324"),
    ("2.2250738585072014e-308", "2.2250738585072014e-308"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("1e100", "1e+100"),
    ("-1e-100", "-1e-100"),
    ("0.5", "0.5"),
    ("1.05", "1.05"),
    ("4.35", "4.35"),
    ("0.000123", "0.000123"),
    ("1234567.89", "1234567.89"),
    ("12345678901234567890", "12345678901234567000"),
    ("3.141592653589793", "3.141592653589793"),
    ("2.718281828459045", "2.718281828459045"),
    ("1e300", "1e+300"),
    ("1.5e-10", "1.5e-10"),
    ("-0.000001", "-0.000001"),
    ("0.00001", "0.00001"),
    ("100000000000000000000", "100000000000000000000"),
    ("1000000000000000000000", "1e+21"),
];

#[test]
fn decimal_number_table() {
    let mut out = String::new();
    writeln!(out, "# js_number_to_string: number -> String(number) in JavaScript").unwrap();
    for (text, js) in JS_NUMBER_TO_STRING {
        let x: f64 = text.parse().unwrap();
        assert_eq!(js_number_to_string(x), *js, "String({text})");
        let n = DecimalNumber::try_from(x).unwrap();
        assert_eq!(n.to_string(), *js);
        let decimal = match n.to_decimal() {
            Ok(d) => d.to_string(),
            Err(e) => format!("error: {e}"),
        };
        let json = serde_json::to_string(&n).unwrap();
        writeln!(out, "{text} -> {js} | JSON {json} | to_decimal {decimal}").unwrap();
    }
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = DecimalNumber::try_from(x).unwrap_err();
        writeln!(out, "{} -> {err}", js_number_to_string(x)).unwrap();
    }
    writeln!(out, "\n# serde: JSON -> result").unwrap();
    for json in [
        "1",
        "-0",
        "1.50",
        "1e21",
        "-1e-7",
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
        "123.456",
        r#""1""#,
        "true",
        "null",
        "[]",
        r#"{"a":"1"}"#,
        "1e400",
    ] {
        let result = match serde_json::from_str::<DecimalNumber>(json) {
            Ok(x) => format!("ok {x} (JSON {})", serde_json::to_string(&x).unwrap()),
            Err(e) => format!("error: {e}"),
        };
        writeln!(out, "{json} -> {result}").unwrap();
    }
    insta::assert_snapshot!("decimal_number", out);
}

#[test]
fn decimal_number_behaviour() {
    let n = |x: f64| DecimalNumber::try_from(x).unwrap();
    assert_eq!(serde_json::to_string(&n(1.0)).unwrap(), "1");
    assert_eq!(serde_json::to_string(&n(-0.0)).unwrap(), "0");
    assert_eq!(serde_json::to_string(&n(1.5)).unwrap(), "1.5");
    assert_eq!(serde_json::to_string(&n(9_007_199_254_740_992.0)).unwrap(), "9007199254740992");
    assert_eq!(n(-0.0), n(0.0));
    assert_eq!(n(-0.0).as_f64().to_bits(), 0.0f64.to_bits());
    assert!(n(-1.0) < n(0.0) && n(0.0) < n(f64::MIN_POSITIVE));
    assert_eq!(DecimalNumber::from(7i32), n(7.0));
    assert_eq!(DecimalNumber::from(u32::MAX), n(4_294_967_295.0));
    assert_eq!(n(0.1).to_decimal().unwrap(), Decimal::from_str_exact("0.1").unwrap());
    assert_eq!(n(1e30).to_decimal().unwrap_err().kind(), DecimalRangeErrorKind::TooManyDigits { needed: 31 });
    assert_eq!(n(1e-30).to_decimal().unwrap_err().kind(), DecimalRangeErrorKind::TooManyDecimalPlaces { needed: 30 });
    let err = serde_json::from_str::<DecimalNumber>(r#""1""#).unwrap_err().to_string();
    assert!(err.starts_with(r#"Expected number, actual "1""#), "{err}");
    let err = serde_json::from_str::<DecimalString>("1.50").unwrap_err().to_string();
    assert!(err.starts_with("Expected string, actual 1.5"), "{err}");
    let err = serde_json::from_str::<DecimalString>(r#"{"b":1,"2":[1e21],"1":null}"#).unwrap_err().to_string();
    assert!(err.starts_with(r#"Expected string, actual {"1":null,"2":[1e+21],"b":1}"#), "{err}");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn decimal_number_encode_decode_identity(x in any::<DecimalNumber>()) {
        // JSON text (the test build has serde_json's float_roundtrip through a dev-dependency).
        let json = serde_json::to_string(&x).unwrap();
        prop_assert_eq!(serde_json::from_str::<DecimalNumber>(&json).unwrap(), x);
        if x.as_f64().fract() == 0.0 && x.as_f64().abs() <= 9_007_199_254_740_992.0 {
            prop_assert!(!json.contains(['.', 'e', 'E']), "{}", json);
        }
        // serde_json::Value.
        let value = serde_json::to_value(x).unwrap();
        prop_assert_eq!(serde_json::from_value::<DecimalNumber>(value).unwrap(), x);
        // JavaScript's String(x) reads back as x.
        prop_assert_eq!(x.to_string().parse::<f64>().unwrap(), x.as_f64());
    }

    #[test]
    fn decimal_number_to_decimal_is_exact(x in any::<DecimalNumber>()) {
        let shortest = x.to_decimal_string();
        prop_assert_eq!(shortest.to_string().parse::<f64>().unwrap(), x.as_f64());
        match x.to_decimal() {
            Ok(d) => prop_assert_eq!(DecimalString::from(d).cmp_numeric(&shortest), Ordering::Equal),
            Err(e) => prop_assert!(Decimal::from_str_exact(&shortest.to_string()).is_err(), "{}", e),
        }
    }
}

// ===================================================================================================
// DateString

/// `new Date(input)` in Node.js 20 with `TZ=UTC`: `toISOString()`, or `None` for an invalid date.
const NODE_DATES: &[(&str, Option<&str>)] = &[
    ("2026", Some("2026-01-01T00:00:00.000Z")),
    ("2026-01", Some("2026-01-01T00:00:00.000Z")),
    ("2026-01-02", Some("2026-01-02T00:00:00.000Z")),
    ("+002026-01-02", Some("2026-01-02T00:00:00.000Z")),
    ("-000001-01-01", Some("-000001-01-01T00:00:00.000Z")),
    ("+000000-01-01", Some("0000-01-01T00:00:00.000Z")),
    ("-000000-01-01", Some("2001-01-01T00:00:00.000Z")),
    ("+275760-09-13", Some("+275760-09-13T00:00:00.000Z")),
    ("-271821-04-20", Some("-271821-04-20T00:00:00.000Z")),
    ("2026-01-02T03:04", Some("2026-01-02T03:04:00.000Z")),
    ("2026-01-02T03:04:05", Some("2026-01-02T03:04:05.000Z")),
    ("2026-01-02T03:04:05.678", Some("2026-01-02T03:04:05.678Z")),
    ("2026-01-02T03:04:05.678Z", Some("2026-01-02T03:04:05.678Z")),
    ("2026-01-02T03:04:05.6Z", Some("2026-01-02T03:04:05.600Z")),
    ("2026-01-02T03:04:05.67Z", Some("2026-01-02T03:04:05.670Z")),
    ("2026-01-02T03:04:05.6789Z", Some("2026-01-02T03:04:05.678Z")),
    ("2026-01-02T03:04:05.123456789Z", Some("2026-01-02T03:04:05.123Z")),
    ("2026-01-02T03:04:05.0123456789Z", Some("2026-01-02T03:04:05.123Z")),
    ("2026-01-02T03:04:05.000000001Z", Some("2026-01-02T03:04:05.000Z")),
    ("2026-01-02T03:04:05.Z", None),
    ("2026-01-02T03:04:05+01:00", Some("2026-01-02T02:04:05.000Z")),
    ("2026-01-02T03:04:05-05:30", Some("2026-01-02T08:34:05.000Z")),
    ("2026-01-02T03:04:05+0100", Some("2026-01-02T02:04:05.000Z")),
    ("2026-01-02T03:04+23:59", Some("2026-01-01T03:05:00.000Z")),
    ("2026-01-02T03:04+24:00", None),
    ("2026-01-02T03:04+01:60", None),
    ("2026-01-02T03:04+01", None),
    ("2026-01-02t03:04:05z", Some("2026-01-02T03:04:05.000Z")),
    ("2026-01-02T24:00", Some("2026-01-03T00:00:00.000Z")),
    ("2026-01-02T24:00:00.000Z", Some("2026-01-03T00:00:00.000Z")),
    ("2026-01-02T24:00:01Z", None),
    ("2026-01-02T24:01Z", None),
    ("2026-01-02T23:59:59.999Z", Some("2026-01-02T23:59:59.999Z")),
    ("2026-01-02T03:04:60Z", None),
    ("2026-01-02T03:60Z", None),
    ("2026-01-02T25:00Z", None),
    ("2026-01-02T3:04Z", None),
    ("2026-01-02T03Z", None),
    ("2026T03:04Z", Some("2026-01-01T03:04:00.000Z")),
    ("2026-01T03:04Z", Some("2026-01-01T03:04:00.000Z")),
    ("2026-02-29", Some("2026-03-01T00:00:00.000Z")),
    ("2026-02-30", Some("2026-03-02T00:00:00.000Z")),
    ("2026-02-31T12:00Z", Some("2026-03-03T12:00:00.000Z")),
    ("2028-02-29", Some("2028-02-29T00:00:00.000Z")),
    ("2026-04-31", Some("2026-05-01T00:00:00.000Z")),
    ("2026-02-32", None),
    ("2026-13-01", None),
    ("2026-00-01", None),
    ("2026-01-00", None),
    ("+275760-09-13T00:00:00.000Z", Some("+275760-09-13T00:00:00.000Z")),
    ("+275760-09-13T00:00:00.001Z", None),
    ("+275760-09-13T00:00:00.001+01:00", Some("+275760-09-12T23:00:00.001Z")),
    ("-271821-04-20T00:00:00.000Z", Some("-271821-04-20T00:00:00.000Z")),
    ("-271821-04-19T23:59:59.999Z", None),
    ("-271821-04-19T23:59:59.999-01:00", Some("-271821-04-20T00:59:59.999Z")),
    ("+275760-09-13T00:00:00.001", None),
    ("10000-01-01", Some("+010000-01-01T00:00:00.000Z")),
    ("+10000-01-01", Some("+010000-01-01T00:00:00.000Z")),
    ("2026-01-02 03:04", Some("2026-01-02T03:04:00.000Z")),
    ("2026-01-02 03:04:05Z", Some("2026-01-02T03:04:05.000Z")),
    ("2026-01-02 03:04:05.678Z", Some("2026-01-02T03:04:05.678Z")),
    ("2026-01-02 03:04:05.678+01:00", Some("2026-01-02T02:04:05.678Z")),
    ("2026-01-02 03:04:05+0100", Some("2026-01-02T02:04:05.000Z")),
    ("2026-01-02 24:00", Some("2026-01-03T00:00:00.000Z")),
    ("2026-01-02 24:00:00.000Z", Some("2026-01-03T00:00:00.000Z")),
    ("2026-01-02 24:00:00.001Z", None),
    ("2026 03:04Z", Some("2026-01-01T03:04:00.000Z")),
    ("2026-01 03:04Z", Some("2026-01-01T03:04:00.000Z")),
    ("+002026-01-02 03:04Z", Some("2026-01-02T03:04:00.000Z")),
    ("0049-01-02 03:04Z", Some("2049-01-02T03:04:00.000Z")),
    ("0050-01-02 03:04Z", Some("1950-01-02T03:04:00.000Z")),
    ("0099-12-31 23:59Z", Some("1999-12-31T23:59:00.000Z")),
    ("0100-01-02 03:04Z", Some("0100-01-02T03:04:00.000Z")),
    ("0005-01-02 03:04Z", Some("2002-05-01T03:04:00.000Z")),
    ("0013-01-02 03:04Z", None),
    ("0049-01-02T03:04Z", Some("0049-01-02T03:04:00.000Z")),
    ("0049-01-02", Some("0049-01-02T00:00:00.000Z")),
    ("2026-01-02 03:04+01", Some("2026-01-02T02:04:00.000Z")),
    ("2026-01-02 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("2026-01-02 03:04 +01:00", Some("2026-01-02T02:04:00.000Z")),
    ("2026-01-02Z", Some("2026-01-02T00:00:00.000Z")),
    ("2026-01-02 ", Some("2026-01-02T00:00:00.000Z")),
    (" 2026-01-02", Some("2026-01-02T00:00:00.000Z")),
    ("2026-1-2", Some("2026-01-02T00:00:00.000Z")),
    ("2026/01/02", Some("2026-01-02T00:00:00.000Z")),
    ("01/02/2026", Some("2026-01-02T00:00:00.000Z")),
    ("2026-01-02T03:04:05.678Zjunk", None),
    ("Fri, 02 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Fri, 2 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Sat, 02 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Friday, 02 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026 03:04 GMT", Some("2026-01-02T03:04:00.000Z")),
    ("02 Jan 2026 03:04:05 +0100", Some("2026-01-02T02:04:05.000Z")),
    ("02 Jan 2026 03:04:05 -0800", Some("2026-01-02T11:04:05.000Z")),
    ("02 Jan 2026 03:04:05 +01:00", Some("2026-01-02T02:04:05.000Z")),
    ("02 Jan 2026 03:04:05 UT", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026 03:04:05 UTC", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026 03:04:05 Z", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026 03:04:05 EST", Some("2026-01-02T08:04:05.000Z")),
    ("02 Jan 2026 03:04:05 EDT", Some("2026-01-02T07:04:05.000Z")),
    ("02 Jan 2026 03:04:05 CST", Some("2026-01-02T09:04:05.000Z")),
    ("02 Jan 2026 03:04:05 CDT", Some("2026-01-02T08:04:05.000Z")),
    ("02 Jan 2026 03:04:05 MST", Some("2026-01-02T10:04:05.000Z")),
    ("02 Jan 2026 03:04:05 MDT", Some("2026-01-02T09:04:05.000Z")),
    ("02 Jan 2026 03:04:05 PST", Some("2026-01-02T11:04:05.000Z")),
    ("02 Jan 2026 03:04:05 PDT", Some("2026-01-02T10:04:05.000Z")),
    ("02 Jan 2026 03:04:05", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 2026", Some("2026-01-02T00:00:00.000Z")),
    ("02 January 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("02 Sept 2026 03:04:05 GMT", Some("2026-09-02T03:04:05.000Z")),
    ("02 jan 2026 03:04:05 gmt", Some("2026-01-02T03:04:05.000Z")),
    ("02 Jan 0049 03:04:05 GMT", Some("2049-01-02T03:04:05.000Z")),
    ("02 Jan 10000 03:04:05 GMT", Some("+010000-01-02T03:04:05.000Z")),
    ("Fri, 02 Jan -0001 03:04:05 GMT", None),
    ("Foo, 02 Jan 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Fri, 02 Jan 2026 3:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Fri, 02 Jan 2026 03:04:05 +2400", Some("2026-01-01T03:04:05.000Z")),
    ("Fri, 32 Jan 2026 03:04:05 GMT", None),
    ("Fri, 30 Feb 2026 03:04:05 GMT", Some("2026-03-02T03:04:05.000Z")),
    ("Fri, 02 Jan 2026 24:00:00 GMT", Some("2026-01-03T00:00:00.000Z")),
    ("Fri, 02 Jan 2026 24:00:01 GMT", None),
    ("Fri Jan 02 2026 03:04:05 GMT+0000 (Coordinated Universal Time)", Some("2026-01-02T03:04:05.000Z")),
    ("Fri Jan 02 2026 03:04:05 GMT+0100 (Central European Standard Time)", Some("2026-01-02T02:04:05.000Z")),
    ("Fri Jan 02 2026 03:04:05 GMT-0500 (Eastern Standard Time)", Some("2026-01-02T08:04:05.000Z")),
    ("Fri Jan 02 2026 03:04:05 GMT+0530", Some("2026-01-01T21:34:05.000Z")),
    ("Fri Jan 02 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Fri Jan 02 2026 03:04:05", Some("2026-01-02T03:04:05.000Z")),
    ("Fri Jan 02 2026 03:04", Some("2026-01-02T03:04:00.000Z")),
    ("Fri Jan 02 2026", Some("2026-01-02T00:00:00.000Z")),
    ("Jan 02 2026", Some("2026-01-02T00:00:00.000Z")),
    ("Jan 2 2026 03:04:05 UTC", Some("2026-01-02T03:04:05.000Z")),
    ("January 02 2026 03:04:05 GMT+0100 (CET)", Some("2026-01-02T02:04:05.000Z")),
    ("Fri Jan 02 0049 03:04:05 GMT+0000", Some("2049-01-02T03:04:05.000Z")),
    ("Sat Sep 13 275760 00:00:00 GMT+0000 (Coordinated Universal Time)", Some("+275760-09-13T00:00:00.000Z")),
    ("Sat Sep 13 275760 00:00:01 GMT+0000 (Coordinated Universal Time)", None),
    ("Fri, Jan 02 2026 03:04:05 GMT", Some("2026-01-02T03:04:05.000Z")),
    ("Fri Jan 02, 2026", Some("2026-01-02T00:00:00.000Z")),
    ("Jan 2, 2026", Some("2026-01-02T00:00:00.000Z")),
    ("Fri Jan 02 2026 03:04:05 GMT+0000 (a (nested) comment)", Some("2026-01-02T03:04:05.000Z")),
    ("", None),
    ("NaN", None),
    ("Invalid Date", None),
    ("now", None),
    ("1767323045678", None),
    ("2026-01-02T03:04:05.678Z ", None),
    ("2026-01-02T24:00:00.0000000001Z", None),
    ("2026-01-02 24:00:00.0000000001Z", Some("2026-01-03T00:00:00.000Z")),
    ("0000-01-02 03:04Z", Some("2000-01-02T03:04:00.000Z")),
    ("-000049-01-02 03:04Z", Some("-000049-01-02T03:04:00.000Z")),
    ("0012-13-02 03:04Z", Some("2002-12-13T03:04:00.000Z")),
    ("2026-01-02T03:04:05.0099999999Z", Some("2026-01-02T03:04:05.099Z")),
];

/// Strings V8 accepts with its implementation-defined fallback parser that are outside the documented
/// forms and deliberately rejected (see the `date_string` module documentation).
const DATE_DIVERGENCES: &[(&str, &str)] = &[
    ("-000000-01-01", "-000000 is not a valid expanded year (V8 reads it as 2001-01-01)"),
    ("10000-01-01", "five-digit years need the expanded form +010000"),
    ("+10000-01-01", "expanded years have six digits"),
    ("2026-01-02 03:04+01", "offsets need minutes"),
    ("2026-01-02 03:04:05 GMT", "a zone name after an ISO date"),
    ("2026-01-02 03:04 +01:00", "a blank before the offset"),
    ("2026-01-02Z", "an offset without a time"),
    ("2026-01-02 ", "surrounding blanks"),
    (" 2026-01-02", "surrounding blanks"),
    ("2026-1-2", "one-digit month and day"),
    ("2026/01/02", "slashes"),
    ("01/02/2026", "slashes, month first"),
    ("Foo, 02 Jan 2026 03:04:05 GMT", "not a weekday name"),
    ("Fri, 02 Jan 2026 3:04:05 GMT", "one-digit hour"),
    ("Fri, 02 Jan 2026 03:04:05 +2400", "offset beyond 23:59"),
    ("Fri, Jan 02 2026 03:04:05 GMT", "weekday with comma before a month-first date"),
    ("Fri Jan 02, 2026", "comma after the day"),
    ("Jan 2, 2026", "comma after the day"),
    ("Fri Jan 02 2026 03:04:05 GMT+0000 (a (nested) comment)", "nested parentheses"),
    ("0012-13-02 03:04Z", "month 13 (V8 reads it as 2002-12-13)"),
];

/// `new Date(millis).toISOString()` in Node.js.
const NODE_ISO_STRINGS: &[(i64, &str)] = &[
    (0, "1970-01-01T00:00:00.000Z"),
    (-1, "1969-12-31T23:59:59.999Z"),
    (1, "1970-01-01T00:00:00.001Z"),
    (1767323045678, "2026-01-02T03:04:05.678Z"),
    (-8640000000000000, "-271821-04-20T00:00:00.000Z"),
    (8640000000000000, "+275760-09-13T00:00:00.000Z"),
    (253402300799999, "9999-12-31T23:59:59.999Z"),
    (253402300800000, "+010000-01-01T00:00:00.000Z"),
    (-62167219200000, "0000-01-01T00:00:00.000Z"),
    (-62167219200001, "-000001-12-31T23:59:59.999Z"),
    (-62198755200000, "-000001-01-01T00:00:00.000Z"),
    (946684800000, "2000-01-01T00:00:00.000Z"),
    (951782400000, "2000-02-29T00:00:00.000Z"),
    (4102444800000, "2100-01-01T00:00:00.000Z"),
    (-2208988800000, "1900-01-01T00:00:00.000Z"),
    (1000000000000000, "+033658-09-27T01:46:40.000Z"),
    (-1000000000000000, "-029719-04-05T22:13:20.000Z"),
    (8639999999999999, "+275760-09-12T23:59:59.999Z"),
    (-8639999999999999, "-271821-04-20T00:00:00.001Z"),
];

#[test]
fn date_string_table() {
    let divergent: BTreeSet<&str> = DATE_DIVERGENCES.iter().map(|(input, _)| *input).collect();
    let mut out = String::new();
    writeln!(out, "# input -> toISOString() | rejected (node: what V8 gives)").unwrap();
    for (input, node) in NODE_DATES {
        let ours = input.parse::<DateString>();
        if divergent.contains(input) {
            assert!(node.is_some(), "{input:?} is listed as a divergence but node rejects it too");
            assert!(ours.is_err(), "{input:?} must be rejected");
        } else {
            assert_eq!(ours.as_ref().ok().map(ToString::to_string).as_deref(), *node, "new Date({input:?})");
        }
        match ours {
            Ok(d) => writeln!(out, "{} -> {d}", q(input)).unwrap(),
            Err(e) if node.is_some() => writeln!(out, "{} -> {e} (node: {})", q(input), node.unwrap()).unwrap(),
            Err(e) => writeln!(out, "{} -> {e}", q(input)).unwrap(),
        }
    }
    for (input, _) in DATE_DIVERGENCES {
        assert!(NODE_DATES.iter().any(|(i, _)| i == input), "{input:?} missing from the node table");
    }
    writeln!(out, "\n# millis -> toISOString()").unwrap();
    for (millis, iso) in NODE_ISO_STRINGS {
        let d = DateString::from_millis(*millis).unwrap();
        assert_eq!(d.to_string(), *iso);
        assert_eq!(iso.parse::<DateString>().unwrap(), d);
        writeln!(out, "{millis} -> {d}").unwrap();
    }
    writeln!(out, "\n# serde: JSON -> result").unwrap();
    for json in [
        r#""2026-01-02T03:04:05.678Z""#,
        r#""2026-01-02""#,
        r#""nope""#,
        r#""""#,
        "1767323045678",
        "null",
        r#"["2026-01-02"]"#,
    ] {
        let result = match serde_json::from_str::<DateString>(json) {
            Ok(x) => format!("ok {}", serde_json::to_string(&x).unwrap()),
            Err(e) => format!("error: {e}"),
        };
        writeln!(out, "{json} -> {result}").unwrap();
    }
    insta::assert_snapshot!("date_string", out);
}

#[test]
fn date_string_api() {
    assert!(DateString::from_millis(8_640_000_000_000_001).is_none());
    assert!(DateString::from_millis(-8_640_000_000_000_001).is_none());
    assert_eq!(DateString::MAX.millis(), 8_640_000_000_000_000);
    assert_eq!(DateString::MIN.to_string(), "-271821-04-20T00:00:00.000Z");
    let d: DateString = "2026-01-02T03:04:05.678Z".parse().unwrap();
    assert_eq!(d.millis(), 1_767_323_045_678);
    let c = d.to_chrono().unwrap();
    assert_eq!(c.to_rfc3339_opts(chrono::SecondsFormat::Millis, true), "2026-01-02T03:04:05.678Z");
    // chrono keeps microseconds; the conversion drops them.
    let precise = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678999Z").unwrap().to_utc();
    assert_eq!(DateString::from(precise), d);
    let before_epoch = chrono::DateTime::parse_from_rfc3339("1969-12-31T23:59:59.9999Z").unwrap().to_utc();
    assert_eq!(DateString::from(before_epoch).to_string(), "1969-12-31T23:59:59.999Z");
    // JavaScript's range exceeds chrono's.
    assert!(DateString::MAX.to_chrono().is_none());
    assert!(DateString::MIN.to_chrono().is_none());
    let err = "nope".parse::<DateString>().unwrap_err();
    assert_eq!(err.to_string(), r#"invalid date string "nope""#);
    assert_eq!(err.input(), "nope");
    let err = serde_json::from_str::<DateString>("1").unwrap_err().to_string();
    assert!(err.starts_with("Expected string, actual 1"), "{err}");
    assert!("2026-01-02".parse::<DateString>().unwrap() < d);
}

/// `YYYY-MM-DDTHH:mm:ss.sssZ` for years 0000–9999, `±YYYYYY-MM-DDTHH:mm:ss.sssZ` for the others.
fn looks_like_iso_string(s: &str) -> bool {
    let expanded = s.starts_with(['+', '-']);
    let shape = if expanded { "+000000-00-00T00:00:00.000Z" } else { "0000-00-00T00:00:00.000Z" };
    let shaped = s.len() == shape.len()
        && s.bytes().zip(shape.bytes()).all(|(c, p)| match p {
            b'0' => c.is_ascii_digit(),
            b'+' => c == b'+' || c == b'-',
            _ => c == p,
        });
    let year: i64 = s.get(..if expanded { 7 } else { 4 }).and_then(|y| y.parse().ok()).unwrap_or(-1);
    shaped && (expanded != (0..=9999).contains(&year))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn date_string_encode_decode_identity(d in any::<DateString>()) {
        let text = d.to_string();
        prop_assert!(looks_like_iso_string(&text), "{}", text);
        prop_assert_eq!(text.parse::<DateString>().unwrap(), d);
        let json = serde_json::to_string(&d).unwrap();
        prop_assert_eq!(&json, &format!("\"{text}\""));
        prop_assert_eq!(serde_json::from_str::<DateString>(&json).unwrap(), d);
        if let Some(c) = d.to_chrono() {
            prop_assert_eq!(DateString::from(c), d);
        }
    }

    #[test]
    fn date_string_reads_rfc2822(d in any::<DateString>()) {
        // chrono's RFC 2822 (years 100..=9999 avoid V8's two-digit-year reading), seconds precision.
        let c = d.to_chrono().filter(|c| (100..=9999).contains(&chrono::Datelike::year(c)));
        prop_assume!(c.is_some());
        let c = c.unwrap();
        let text = c.to_rfc2822();
        let parsed: DateString = text.parse().unwrap();
        prop_assert_eq!(parsed.millis(), d.millis().div_euclid(1000) * 1000, "{}", text);
    }
}

/// `js::from_json_slice` is `JSON.parse`: numbers are the nearest float to their text (serde_json's default
/// parsing can be one unit in the last place off for long mantissas), so `JSON.stringify(JSON.parse(s))` is a
/// fixed point. Found by fuzzing the webhook verifier (`fuzz/`): `37333333333333344000` came back as
/// `37333333333333340000` and a signature over it would not have verified.
#[test]
fn js_parse_reads_numbers_exactly() {
    use bridge_contract::js::{from_json_slice, JsValue};
    for text in [
        "37333333333333344000",
        "0.30000000000000004",
        "1.7976931348623157e308",
        "5e-324",
        "-0.1",
        "123456789012345678901234567890",
        "9007199254740993",
    ] {
        let parsed = from_json_slice(text.as_bytes()).unwrap();
        assert_eq!(parsed, JsValue::Number(text.parse::<f64>().unwrap()), "{text}");
        let once = parsed.to_string();
        assert_eq!(from_json_slice(once.as_bytes()).unwrap().to_string(), once, "{text}: a fixed point");
    }
    // Numbers inside strings and escaped quotes are not numbers; repeated keys keep their first position and
    // last value; index-like keys come first.
    let v = from_json_slice(br#"{"b":"1\"2 3","a":[1.5,{"x":-2e3}],"b":7,"10":0.30000000000000004,"2":true}"#).unwrap();
    assert_eq!(v.to_string(), r#"{"2":true,"10":0.30000000000000004,"b":7,"a":[1.5,{"x":-2000}]}"#);
    // Same errors as serde_json, trailing characters refused.
    assert!(from_json_slice(b"{\"a\":1} x").is_err());
    assert!(from_json_slice(b"1e400").is_err());
    assert_eq!(
        from_json_slice(b"[1,").unwrap_err().to_string(),
        serde_json::from_slice::<JsValue>(b"[1,").unwrap_err().to_string()
    );
}

/// The fast paths of the scalars against their general parsers (`bridge_contract::scalars::oracle`).
mod fast_paths {
    use bridge_contract::scalars::oracle;
    use bridge_contract::{DateString, DecimalString};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, failure_persistence: None, ..ProptestConfig::default() })]

        /// A string kept as it came (it is an encoding) is exactly what the general rules make of it.
        #[test]
        fn decimal_encodings_kept_as_they_came_are_what_the_rules_read(
            s in "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,30})?|-?0\\.0{97,102}[0-9]{0,2}|[+-]?0*[0-9]{0,3}\\.?[0-9]{0,3}(e-?[0-9])?",
        ) {
            let general = oracle::decimal_general(&s);
            let parsed = s.parse::<DecimalString>().ok();
            prop_assert_eq!(&parsed, &general);
            prop_assert_eq!(parsed.as_ref().map(ToString::to_string), general.as_ref().map(ToString::to_string));
            if let Some(scale) = oracle::decimal_encoding_scale(&s) {
                let value = general.expect("an encoding decodes");
                prop_assert_eq!(value.to_string(), s.clone(), "kept text is the encoding");
                prop_assert_eq!(value.scale(), scale);
            }
        }

        /// `toISOString()`-shaped strings (any digits, so also bad months, days, hours, 24:00) read by the short
        /// path give what the general parser gives, and keep a text equal to the instant's `toISOString()`.
        #[test]
        fn iso_date_strings_read_as_the_general_parser_reads_them(
            s in "[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9]\\.[0-9]{3}Z",
        ) {
            let general = oracle::date_general(&s);
            let parsed = s.parse::<DateString>().ok();
            prop_assert_eq!(parsed, general);
            if let Some(value) = parsed {
                prop_assert_eq!(value.to_string(), oracle::date_iso(value.millis()));
            }
        }
    }
}
