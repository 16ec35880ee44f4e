//! The built-in catalogue and catalogue files: TOML read, merged over the built-in one, and resolved into the
//! model (symbol defaults, validation of every value), as the module documentation of [`super`] states.

use std::collections::BTreeMap;
use std::fmt;

use bridge_contract::{Aggregator, DecimalString, Speed};
use rust_decimal::Decimal;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::{
    token_address_is_valid, AddressLimitSettings, AddressLimits, Catalogue, CatalogueError, Chain, Family, FeeSettings,
    PromotionSetting, Sponsorship, Token, MAX_PERCENT_SCALE, MAX_PRICE_SCALE, MAX_TOKEN_DECIMALS,
};

/// The built-in catalogue.
pub const BUILTIN_TOML: &str = include_str!("default.toml");

/// A catalogue from its merged TOML (`inherit_builtin` already applied).
pub(super) fn from_table(mut raw: toml::Table) -> Result<Catalogue, CatalogueError> {
    raw.remove("inherit_builtin");
    let file = RawFile::deserialize(toml::Value::Table(raw.clone())).map_err(|e| CatalogueError::new(e.to_string()))?;
    let address_limits = address_limits(&file)?;
    let (chains, fees) = resolve(file)?;
    Ok(Catalogue { raw, chains, fees, address_limits })
}

/// Deep merge: tables merge key by key, everything else is replaced.
pub(super) fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// An exact decimal read from a TOML string (a decimal string as the contract accepts it), integer or
/// float (through its shortest decimal form).
#[derive(Debug, Clone, Copy)]
struct Dec(Decimal);

impl<'de> Deserialize<'de> for Dec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decimal (a string such as \"0.1\", or a number)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dec, E> {
                let parsed: DecimalString = v.parse().map_err(|e| E::custom(format!("{e}")))?;
                parsed.to_decimal().map(Dec).map_err(|e| E::custom(format!("{e}")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dec, E> {
                Ok(Dec(Decimal::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dec, E> {
                Ok(Dec(Decimal::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dec, E> {
                if !v.is_finite() {
                    return Err(E::custom("not a finite number"));
                }
                self.visit_str(&format!("{v}"))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// An optional decimal where `""` means "none" (so that an override can remove a built-in value).
#[derive(Debug, Clone, Copy)]
struct OptDec(Option<Decimal>);

impl<'de> Deserialize<'de> for OptDec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Empty(EmptyString),
            Value(Dec),
        }
        struct EmptyString;
        impl<'de> Deserialize<'de> for EmptyString {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                if s.is_empty() {
                    Ok(EmptyString)
                } else {
                    Err(de::Error::custom("not empty"))
                }
            }
        }
        match Either::deserialize(deserializer)
            .map_err(|_| de::Error::custom("expected a decimal, or \"\" for none"))?
        {
            Either::Empty(_) => Ok(OptDec(None)),
            Either::Value(d) => Ok(OptDec(Some(d.0))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    fees: RawFees,
    #[serde(default)]
    swap: RawSwap,
    #[serde(default)]
    promotions: Vec<RawPromotion>,
    #[serde(default)]
    projects: BTreeMap<String, RawProject>,
    #[serde(default)]
    deposit_address_limits: RawAddressLimits,
    #[serde(default)]
    symbols: BTreeMap<String, RawTokenFields>,
    #[serde(default)]
    chains: BTreeMap<String, RawChain>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFees {
    platform_fee_usd: Option<Dec>,
    percentage_fee: Option<Dec>,
    percentage_fee_threshold_usd: Option<OptDec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSwap {
    fee_percentage: Option<Dec>,
    slippage_percentage: Option<Dec>,
    aggregator: Option<Aggregator>,
    bridge_token_preference: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPromotion {
    name: String,
    max_limit_usd: Option<OptDec>,
    #[serde(default)]
    chains_out: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    #[serde(default)]
    sponsor_gas_fee: bool,
    #[serde(default)]
    sponsor_source_gas_fee: bool,
    #[serde(default)]
    sponsor_platform_fee: bool,
    /// This project's deposit-address creation limits, over `deposit_address_limits` member by member.
    #[serde(default)]
    deposit_address_limits: RawAddressLimits,
}

/// `[deposit_address_limits]` and `[projects.X.deposit_address_limits]`: `total` addresses in all, `window`
/// addresses in any `window_ms`; `0` as `total` or `window` means unlimited (the TOML has no null).
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawAddressLimits {
    total: Option<u64>,
    window: Option<u64>,
    window_ms: Option<u64>,
}

impl RawAddressLimits {
    fn over(self, base: AddressLimits) -> AddressLimits {
        let limit = |given: Option<u64>, base: Option<u64>| match given {
            Some(0) => None,
            Some(n) => Some(n),
            None => base,
        };
        AddressLimits {
            total: limit(self.total, base.total),
            window: limit(self.window, base.window),
            window_ms: self.window_ms.unwrap_or(base.window_ms),
        }
    }
}

fn address_limits(file: &RawFile) -> Result<AddressLimitSettings, CatalogueError> {
    let unlimited = AddressLimits { total: None, window: None, window_ms: 3_600_000 };
    let default = file.deposit_address_limits.over(unlimited);
    let check = |here: &str, limits: AddressLimits| {
        if limits.window.is_some() && limits.window_ms == 0 {
            return Err(CatalogueError::new(format!("{here}: `window_ms` must be above 0 when `window` is set")));
        }
        Ok(limits)
    };
    let default = check("deposit_address_limits", default)?;
    let mut projects = BTreeMap::new();
    for (id, p) in &file.projects {
        let limits = check(&format!("projects.{id}.deposit_address_limits"), p.deposit_address_limits.over(default))?;
        projects.insert(id.clone(), limits);
    }
    Ok(AddressLimitSettings { default, projects })
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct RawTokenFields {
    usd_price: Option<Dec>,
    decimals: Option<u32>,
    bridgeable: Option<bool>,
    min_deposit_usd: Option<Dec>,
    max_deposit_usd: Option<Dec>,
    max_deposit: Option<Dec>,
    max_withdraw: Option<Dec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToken {
    enabled: Option<bool>,
    address: Option<String>,
    usd_price: Option<Dec>,
    decimals: Option<u32>,
    bridgeable: Option<bool>,
    min_deposit_usd: Option<Dec>,
    max_deposit_usd: Option<Dec>,
    max_deposit: Option<Dec>,
    max_withdraw: Option<Dec>,
}

impl RawToken {
    fn fields(&self) -> RawTokenFields {
        RawTokenFields {
            usd_price: self.usd_price,
            decimals: self.decimals,
            bridgeable: self.bridgeable,
            min_deposit_usd: self.min_deposit_usd,
            max_deposit_usd: self.max_deposit_usd,
            max_deposit: self.max_deposit,
            max_withdraw: self.max_withdraw,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChain {
    enabled: Option<bool>,
    family: Option<Family>,
    native_symbol: Option<String>,
    native_decimals: Option<u32>,
    gas_fee_usd: Option<Dec>,
    sweep_fee_usd: Option<Dec>,
    speed: Option<Speed>,
    estimated_duration_ms: Option<u64>,
    confirmations: Option<u32>,
    block_time_ms: Option<u64>,
    #[serde(default)]
    tokens: BTreeMap<String, RawToken>,
}

fn resolve(file: RawFile) -> Result<(BTreeMap<String, Chain>, FeeSettings), CatalogueError> {
    let err = |m: String| CatalogueError::new(m);
    let percent = |name: &str, v: Option<Dec>| -> Result<Decimal, CatalogueError> {
        let v = v.ok_or_else(|| err(format!("missing `{name}`")))?.0.normalize();
        if v.is_sign_negative() || v >= Decimal::ONE_HUNDRED || v.scale() > MAX_PERCENT_SCALE {
            return Err(err(format!(
                "`{name}` = {v}: a percentage must be at least 0, below 100, with at most {MAX_PERCENT_SCALE} decimal places"
            )));
        }
        Ok(v)
    };
    let usd = |name: &str, v: Option<Dec>| -> Result<Decimal, CatalogueError> {
        let v = v.ok_or_else(|| err(format!("missing `{name}`")))?.0.normalize();
        if v.is_sign_negative() {
            return Err(err(format!("`{name}` = {v} must not be negative")));
        }
        Ok(v)
    };

    let promotions = file
        .promotions
        .into_iter()
        .map(|p| {
            let max = p.max_limit_usd.and_then(|o| o.0).map(|d| d.normalize());
            if max.is_some_and(|m| m.is_sign_negative()) {
                return Err(err(format!("promotion {:?}: `max_limit_usd` must not be negative", p.name)));
            }
            Ok(PromotionSetting { name: p.name, max_limit_usd: max, chains_out: p.chains_out })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let threshold = file.fees.percentage_fee_threshold_usd.and_then(|o| o.0).map(|d| d.normalize());
    if threshold.is_some_and(|t| t.is_sign_negative()) {
        return Err(err("`fees.percentage_fee_threshold_usd` must not be negative".into()));
    }
    let fees = FeeSettings {
        platform_fee_usd: usd("fees.platform_fee_usd", file.fees.platform_fee_usd)?,
        percentage_fee: percent("fees.percentage_fee", file.fees.percentage_fee)?,
        percentage_fee_threshold_usd: threshold,
        promotions,
        sponsored_projects: file
            .projects
            .into_iter()
            .map(|(id, p)| {
                let s = Sponsorship {
                    gas_fee: p.sponsor_gas_fee,
                    source_gas_fee: p.sponsor_source_gas_fee,
                    platform_fee: p.sponsor_platform_fee,
                };
                (id, s)
            })
            .collect(),
        swap_fee_percentage: percent("swap.fee_percentage", file.swap.fee_percentage)?,
        swap_slippage_percentage: percent("swap.slippage_percentage", file.swap.slippage_percentage)?,
        aggregator: file.swap.aggregator.ok_or_else(|| err("missing `swap.aggregator`".into()))?,
        bridge_token_preference: file.swap.bridge_token_preference.unwrap_or_default(),
    };

    let mut chains = BTreeMap::new();
    for (id, raw) in file.chains {
        if raw.enabled == Some(false) {
            continue;
        }
        let here = format!("chains.{id}");
        let missing = |f: &str| err(format!("{here}: missing `{f}`"));
        let family = raw.family.ok_or_else(|| missing("family"))?;
        let native_symbol = raw.native_symbol.ok_or_else(|| missing("native_symbol"))?;
        let native = file.symbols.get(&native_symbol);
        let native_decimals = raw
            .native_decimals
            .or(native.and_then(|n| n.decimals))
            .ok_or_else(|| err(format!("{here}: missing `native_decimals` (or `symbols.{native_symbol}.decimals`)")))?;
        let native_usd_price = native
            .and_then(|n| n.usd_price)
            .ok_or_else(|| err(format!("{here}: missing `symbols.{native_symbol}.usd_price` (native token)")))?
            .0
            .normalize();
        check_price(&format!("symbols.{native_symbol}.usd_price"), native_usd_price)?;
        if native_decimals > MAX_TOKEN_DECIMALS {
            return Err(err(format!("{here}: native decimals above {MAX_TOKEN_DECIMALS}")));
        }
        let mut tokens = BTreeMap::new();
        for (symbol, t) in raw.tokens {
            if t.enabled == Some(false) {
                continue;
            }
            let at = format!("{here}.tokens.{symbol}");
            let sym = file.symbols.get(&symbol).cloned().unwrap_or_default();
            let f = &t.fields();
            let need = |name: &str, a: Option<Dec>, b: Option<Dec>| -> Result<Decimal, CatalogueError> {
                a.or(b).map(|d| d.0.normalize()).ok_or_else(|| {
                    err(format!("{at}: missing `{name}` (set it on the token or in [symbols.{symbol}])"))
                })
            };
            let address = t.address.clone().ok_or_else(|| err(format!("{at}: missing `address`")))?;
            if !token_address_is_valid(family, &address) {
                return Err(err(format!("{at}: address {address:?} is not a valid {family} token address")));
            }
            let decimals = f.decimals.or(sym.decimals).ok_or_else(|| err(format!("{at}: missing `decimals`")))?;
            if decimals > MAX_TOKEN_DECIMALS {
                return Err(err(format!("{at}: decimals above {MAX_TOKEN_DECIMALS}")));
            }
            let token = Token {
                symbol: symbol.clone(),
                address,
                decimals,
                usd_price: need("usd_price", f.usd_price, sym.usd_price)?,
                bridgeable: f.bridgeable.or(sym.bridgeable).unwrap_or(true),
                min_deposit_usd: need("min_deposit_usd", f.min_deposit_usd, sym.min_deposit_usd)?,
                max_deposit_usd: need("max_deposit_usd", f.max_deposit_usd, sym.max_deposit_usd)?,
                max_deposit: need("max_deposit", f.max_deposit, sym.max_deposit)?,
                max_withdraw: need("max_withdraw", f.max_withdraw, sym.max_withdraw)?,
            };
            check_price(&format!("{at}.usd_price"), token.usd_price)?;
            if token.min_deposit_usd.is_sign_negative() || token.min_deposit_usd > token.max_deposit_usd {
                return Err(err(format!("{at}: need 0 <= min_deposit_usd <= max_deposit_usd")));
            }
            for (name, v) in [("max_deposit", token.max_deposit), ("max_withdraw", token.max_withdraw)] {
                if v <= Decimal::ZERO {
                    return Err(err(format!("{at}: `{name}` must be positive")));
                }
                // Every amount up to the limit must have an exact USD value.
                let exact =
                    v.checked_mul(token.usd_price).is_some_and(|p| p.scale() == v.scale() + token.usd_price.scale());
                if !exact {
                    return Err(err(format!("{at}: `{name}` × usd_price exceeds exact decimal arithmetic")));
                }
            }
            tokens.insert(symbol, token);
        }
        let chain = Chain {
            id: id.clone(),
            family,
            native_symbol,
            native_decimals,
            native_usd_price,
            tokens,
            gas_fee_usd: usd(&format!("{here}.gas_fee_usd"), raw.gas_fee_usd)?,
            sweep_fee_usd: usd(&format!("{here}.sweep_fee_usd"), raw.sweep_fee_usd)?,
            speed: raw.speed.ok_or_else(|| missing("speed"))?,
            estimated_duration_ms: raw.estimated_duration_ms.ok_or_else(|| missing("estimated_duration_ms"))?,
            confirmations: raw.confirmations.ok_or_else(|| missing("confirmations"))?,
            block_time_ms: raw.block_time_ms.ok_or_else(|| missing("block_time_ms"))?,
        };
        chains.insert(id, chain);
    }
    for p in &fees.promotions {
        if let Some(c) = p.chains_out.iter().find(|c| !chains.contains_key(*c)) {
            return Err(err(format!("promotion {:?}: unknown chain {c:?} in `chains_out`", p.name)));
        }
    }
    Ok((chains, fees))
}

fn check_price(name: &str, price: Decimal) -> Result<(), CatalogueError> {
    if price <= Decimal::ZERO || price.normalize().scale() > MAX_PRICE_SCALE {
        return Err(CatalogueError::new(format!(
            "`{name}` = {price}: a USD price must be positive with at most {MAX_PRICE_SCALE} decimal places"
        )));
    }
    Ok(())
}
