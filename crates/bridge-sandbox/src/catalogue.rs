//! The sandbox's catalogue: chains, tokens, USD prices, deposit and withdraw limits, fee settings,
//! promotions, sponsored projects and swap settings.
//!
//! The built-in catalogue is `src/catalogue.default.toml` (compiled in with `include_str!`); a config file
//! is merged over it ([`Catalogue::from_toml`], [`Catalogue::with_overrides`]): tables merge key by key,
//! any other value (string, number, array) replaces the built-in one, `enabled = false` removes a chain or
//! a token, and `inherit_builtin = false` at the top of a file makes it a complete catalogue of its own.
//! Every amount and price is an exact decimal (write them as strings, `"0.1"`; TOML numbers are accepted
//! and read through their shortest decimal form).
//!
//! Token fields are looked up on the token (`[chains.X.tokens.Y]`), then on its symbol (`[symbols.Y]`):
//! a symbol carries the defaults (price, decimals, limits) that a chain may override, as BINANCE does for
//! the 18-decimal stablecoins.
//!
//! Addresses are validated per chain family, with checksums where they need no extra crate:
//!
//! | family | accepted |
//! |---|---|
//! | EVM | `0x` + 40 hex digits (any case; the EIP-55 mixed-case checksum is not verified) |
//! | Solana | base58 that decodes to 32 bytes (32–44 characters) |
//! | Tron | base58check `T…`, 34 characters: 25 bytes `0x41` + 20 + 4-byte double-SHA-256 checksum |
//! | TON | user-friendly `EQ…`/`UQ…` (48 characters of base64url or base64: tag, workchain 0 or -1, hash, CRC16) or raw `0:<64 hex>` / `-1:<64 hex>` |
//! | Starknet | `0x` + 1–64 hex digits, value below 2^251 |
//! | Stellar | strkey `G…` (56 characters) or muxed `M…` (69 characters), CRC16 checked; token addresses are `CODE:G…` |
//!
//! Deposit addresses ([`Catalogue::deposit_address`]) are derived from the chain id and a seed by SHA-256
//! and are valid for their family (checksums included). On Stellar a deposit address is a muxed `M…`
//! address over one sandbox base account `G…`, with the seed as memo id, returned with
//! [`ChainMetadata::Stellar`].

use std::collections::BTreeMap;
use std::fmt;

use bridge_contract::{
    Aggregator, ChainMetadata, DecimalNumber, DecimalString, Speed, StellarChainMetadata, SupportedToken,
};
use rust_decimal::Decimal;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// The built-in catalogue.
pub const BUILTIN_TOML: &str = include_str!("catalogue.default.toml");

/// Largest token decimals the catalogue accepts (keeps every product within rust_decimal's 28 places).
pub const MAX_TOKEN_DECIMALS: u32 = 18;
/// Largest number of decimal places of a USD price.
pub const MAX_PRICE_SCALE: u32 = 6;
/// Largest number of decimal places of a percentage setting.
pub const MAX_PERCENT_SCALE: u32 = 2;

// ---------------------------------------------------------------------------------------------------
// Public model
// ---------------------------------------------------------------------------------------------------

/// Address family of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub enum Family {
    #[serde(rename = "evm", alias = "EVM")]
    Evm,
    #[serde(rename = "solana", alias = "SOLANA")]
    Solana,
    #[serde(rename = "stellar", alias = "STELLAR")]
    Stellar,
    #[serde(rename = "tron", alias = "TRON")]
    Tron,
    #[serde(rename = "ton", alias = "TON")]
    Ton,
    #[serde(rename = "starknet", alias = "STARKNET")]
    Starknet,
}

impl Family {
    /// Every family.
    pub const ALL: &'static [Family] =
        &[Family::Evm, Family::Solana, Family::Stellar, Family::Tron, Family::Ton, Family::Starknet];

    /// Upper-case name, as used in `DepositAddressMultipleChainTypesNotAllowed.chainTypes`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Evm => "EVM",
            Family::Solana => "SOLANA",
            Family::Stellar => "STELLAR",
            Family::Tron => "TRON",
            Family::Ton => "TON",
            Family::Starknet => "STARKNET",
        }
    }

    /// What a valid address of this family looks like (for error messages).
    pub fn address_format(self) -> &'static str {
        match self {
            Family::Evm => "0x followed by 40 hexadecimal digits",
            Family::Solana => "a base58 public key of 32 bytes (32 to 44 characters)",
            Family::Stellar => "a Stellar account G... (56 characters) or muxed account M... (69 characters)",
            Family::Tron => "a base58check address T... of 34 characters",
            Family::Ton => "a user-friendly address EQ.../UQ... (48 characters) or a raw address 0:<64 hex>",
            Family::Starknet => "0x followed by 1 to 64 hexadecimal digits, below 2^251",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A chain of the catalogue.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Chain id as production names it (`ETHEREUM`, `MATIC_POS`, ...).
    pub id: String,
    pub family: Family,
    /// Symbol of the native gas token (`ETH`, `POL`, `SOL`, ...): what a gas boost (`amountNative`) delivers.
    pub native_symbol: String,
    pub native_decimals: u32,
    pub native_usd_price: Decimal,
    /// Tokens by symbol.
    pub tokens: BTreeMap<String, Token>,
    /// USD cost of the destination leg when this chain is `chainOut` (the quote's `gasFee`).
    pub gas_fee_usd: Decimal,
    /// USD cost of sweeping a smart-deposit-address deposit when this chain is `chainIn` (`sourceGasFee`).
    pub sweep_fee_usd: Decimal,
    /// Speed class of the chain; a route has the slower class of its two chains.
    pub speed: Speed,
    /// Estimated duration in ms; a route has the longer duration of its two chains.
    pub estimated_duration_ms: u64,
    /// Confirmations a deposit on this chain needs.
    pub confirmations: u32,
    /// Block time in ms (confirmations × block time = time to confirm a deposit).
    pub block_time_ms: u64,
}

impl Chain {
    /// The token `symbol` on this chain.
    pub fn token(&self, symbol: &str) -> Option<&Token> {
        self.tokens.get(symbol)
    }

    /// Time from a deposit's discovery to its confirmation, in ms.
    pub fn confirmation_ms(&self) -> u64 {
        u64::from(self.confirmations).saturating_mul(self.block_time_ms)
    }
}

/// A token on one chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub symbol: String,
    /// Contract address / mint / jetton master / `CODE:ISSUER` on its chain.
    pub address: String,
    pub decimals: u32,
    pub usd_price: Decimal,
    /// Whether the token is bridged as such (`false`: reachable only by swapping on its chain).
    pub bridgeable: bool,
    /// Smallest smart-deposit-address deposit, in USD (`SupportedToken.minDepositLimitUsd`).
    pub min_deposit_usd: Decimal,
    /// Largest smart-deposit-address deposit, in USD (`SupportedToken.maxDepositLimitUsd`).
    pub max_deposit_usd: Decimal,
    /// Largest pay amount of a quote whose `chainIn` is this chain, in the token (`DepositLimitReached`).
    pub max_deposit: Decimal,
    /// Largest receive amount of a quote whose `chainOut` is this chain, in the token (`WithdrawLimitReached`).
    pub max_withdraw: Decimal,
}

/// Fee, promotion, sponsorship and swap settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FeeSettings {
    /// Fixed surcharge per quote, in USD (`platformFee`), converted to the bridged token.
    pub platform_fee_usd: Decimal,
    /// Percentage surcharge on the pay amount: `0.1` means 0.1 % (`percentageFee`, `percentageFeeAmount`).
    pub percentage_fee: Decimal,
    /// The percentage surcharge applies only when the pay amount's USD value is above this (`None`: always).
    pub percentage_fee_threshold_usd: Option<Decimal>,
    /// Promotions, first match wins.
    pub promotions: Vec<PromotionSetting>,
    /// Projects whose fees are (partly) paid by the project, by project id.
    pub sponsored_projects: BTreeMap<String, Sponsorship>,
    /// Swap fee in percent of the swapped value (`0.3` = 0.3 %), taken by each swap of a bridge-swap.
    pub swap_fee_percentage: Decimal,
    /// Slippage tolerance in percent: `minReceiveAmount = receiveAmount × (1 − slippage / 100)`, rounded down.
    pub swap_slippage_percentage: Decimal,
    /// The aggregator named in swap quotes.
    pub aggregator: Aggregator,
    /// Bridge tokens by preference, after the request's own tokens (see `pricing`).
    pub bridge_token_preference: Vec<String>,
}

impl FeeSettings {
    /// `1 − swap fee`, as the string events carry in `swapFeeMultiplier` (`"0.997"`).
    pub fn swap_fee_multiplier(&self) -> DecimalString {
        let m = (Decimal::ONE_HUNDRED - self.swap_fee_percentage) / Decimal::ONE_HUNDRED;
        DecimalString::from(m.normalize())
    }
}

/// A promotion: it waives the platform fee of quotes to one of `chains_out` whose pay amount is worth at
/// most `max_limit_usd`.
#[derive(Debug, Clone, PartialEq)]
pub struct PromotionSetting {
    pub name: String,
    /// `None`: no upper limit.
    pub max_limit_usd: Option<Decimal>,
    /// Destination chains it applies to; empty: every chain.
    pub chains_out: Vec<String>,
}

impl PromotionSetting {
    /// Whether the promotion applies to quotes towards `chain_out` (before the USD limit).
    pub fn covers(&self, chain_out: &str) -> bool {
        self.chains_out.is_empty() || self.chains_out.iter().any(|c| c == chain_out)
    }
}

/// Which fees a sponsored project pays on behalf of its end customers (they move to `sponsoredFees`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sponsorship {
    pub gas_fee: bool,
    pub source_gas_fee: bool,
    pub platform_fee: bool,
}

/// A catalogue file that cannot be read or is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueError {
    pub message: String,
}

impl CatalogueError {
    fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid catalogue: {}", self.message)
    }
}

impl std::error::Error for CatalogueError {}

/// Chains by id, and the fee settings.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// The merged TOML the catalogue was made from (what overrides merge over).
    raw: toml::Table,
    chains: BTreeMap<String, Chain>,
    fees: FeeSettings,
}

impl Catalogue {
    /// The built-in catalogue (`catalogue.default.toml`).
    pub fn builtin() -> Catalogue {
        let raw: toml::Table = toml::from_str(BUILTIN_TOML).expect("the built-in catalogue is valid TOML");
        Self::from_table(raw).expect("the built-in catalogue is consistent")
    }

    /// A catalogue from a config file: merged over the built-in one, unless the file says
    /// `inherit_builtin = false` (then it is complete by itself).
    pub fn from_toml(text: &str) -> Result<Catalogue, CatalogueError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| CatalogueError::new(e.to_string()))?;
        match table.get("inherit_builtin") {
            Some(toml::Value::Boolean(false)) => Self::from_table(table),
            Some(toml::Value::Boolean(true)) | None => Self::builtin().merged(table),
            Some(_) => Err(CatalogueError::new("`inherit_builtin` must be a boolean")),
        }
    }

    /// This catalogue with `text` merged over it.
    pub fn with_overrides(self, text: &str) -> Result<Catalogue, CatalogueError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| CatalogueError::new(e.to_string()))?;
        self.merged(table)
    }

    fn merged(self, over: toml::Table) -> Result<Catalogue, CatalogueError> {
        let mut raw = self.raw;
        merge_tables(&mut raw, over);
        Self::from_table(raw)
    }

    fn from_table(mut raw: toml::Table) -> Result<Catalogue, CatalogueError> {
        raw.remove("inherit_builtin");
        let file =
            RawFile::deserialize(toml::Value::Table(raw.clone())).map_err(|e| CatalogueError::new(e.to_string()))?;
        let (chains, fees) = resolve(file)?;
        Ok(Catalogue { raw, chains, fees })
    }

    /// The merged TOML text of this catalogue (to show what the sandbox runs with).
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.raw).unwrap_or_default()
    }

    pub fn chain(&self, id: &str) -> Option<&Chain> {
        self.chains.get(id)
    }

    /// Chains in id order.
    pub fn chains(&self) -> impl Iterator<Item = &Chain> {
        self.chains.values()
    }

    pub fn fees(&self) -> &FeeSettings {
        &self.fees
    }

    /// The sponsorship of `project_id` (all `false` when it is not sponsored).
    pub fn sponsorship(&self, project_id: &str) -> Sponsorship {
        self.fees.sponsored_projects.get(project_id).copied().unwrap_or_default()
    }

    /// Speed class and estimated duration (ms) of a route: the slower class and the longer duration of
    /// the two chains. `None` when a chain is unknown.
    pub fn route_timing(&self, chain_in: &str, chain_out: &str) -> Option<(Speed, u64)> {
        let (a, b) = (self.chain(chain_in)?, self.chain(chain_out)?);
        Some((a.speed.max(b.speed), a.estimated_duration_ms.max(b.estimated_duration_ms)))
    }

    /// `None` when the address is valid for the chain's family, else a reason.
    pub fn invalid_address(&self, chain: &str, address: &str) -> Option<String> {
        let Some(c) = self.chain(chain) else {
            return Some(format!("unknown chain {:?}", shorten(chain)));
        };
        if address_is_valid(c.family, address) {
            None
        } else {
            Some(format!(
                "{:?} is not a valid {} address on {}: expected {}",
                shorten(address),
                c.family,
                c.id,
                c.family.address_format()
            ))
        }
    }

    /// A fresh deposit address on `chain` from `seed` (deterministic), with chainMetadata for Stellar
    /// (a muxed M... address whose base G... address and memo id are in the metadata).
    pub fn deposit_address(&self, chain: &str, seed: u64) -> Option<(String, Option<ChainMetadata>)> {
        let c = self.chain(chain)?;
        let bytes = sha256(format!("bridge-sandbox/deposit-address/{}/{seed}", c.id).as_bytes());
        Some(match c.family {
            Family::Evm => (format!("0x{}", hex(&bytes[..20])), None),
            Family::Solana => (base58_encode(&bytes), None),
            Family::Tron => {
                let mut payload = vec![0x41u8];
                payload.extend_from_slice(&bytes[..20]);
                (base58check_encode(&payload), None)
            }
            Family::Ton => {
                let mut raw = vec![0x51u8, 0x00];
                raw.extend_from_slice(&bytes);
                let crc = crc16_xmodem(&raw);
                raw.extend_from_slice(&crc.to_be_bytes());
                (base64url_encode(&raw), None)
            }
            Family::Starknet => {
                let mut b = bytes;
                b[0] &= 0x07;
                (format!("0x{}", hex(&b)), None)
            }
            Family::Stellar => {
                let key = stellar_base_key();
                let base = stellar_strkey(STRKEY_ACCOUNT, &key);
                let mut payload = key.to_vec();
                payload.extend_from_slice(&seed.to_be_bytes());
                let muxed = stellar_strkey(STRKEY_MUXED, &payload);
                let metadata = ChainMetadata::Stellar(StellarChainMetadata {
                    tag: Default::default(),
                    base_address: base,
                    memo_id: seed.to_string(),
                });
                (muxed, Some(metadata))
            }
        })
    }

    /// The supported tokens of a deposit address on `deposit_chain` bridging to `destination_chain` (with
    /// `token_out`, when set): tokens on the deposit chain that can reach the destination.
    ///
    /// Without `token_out`: the bridgeable tokens of the deposit chain that are also bridgeable on the
    /// destination chain. With `token_out`: every token of the deposit chain, provided `token_out` exists on
    /// the destination chain and some token is bridgeable on both chains (deposits are swapped to it, bridged
    /// and swapped to `token_out`). Empty for an unknown chain or when both chains are the same. In symbol
    /// order.
    pub fn supported_tokens(
        &self,
        deposit_chain: &str,
        destination_chain: &str,
        token_out: Option<&str>,
    ) -> Vec<SupportedToken> {
        let (Some(from), Some(to)) = (self.chain(deposit_chain), self.chain(destination_chain)) else {
            return Vec::new();
        };
        if from.id == to.id {
            return Vec::new();
        }
        let supported = |t: &Token| SupportedToken {
            symbol: t.symbol.clone(),
            address: t.address.clone(),
            max_deposit_limit_usd: usd_number(t.max_deposit_usd),
            min_deposit_limit_usd: usd_number(t.min_deposit_usd),
        };
        match token_out {
            None => from
                .tokens
                .values()
                .filter(|t| t.bridgeable && to.token(&t.symbol).is_some_and(|o| o.bridgeable))
                .map(supported)
                .collect(),
            Some(out) => {
                if to.token(out).is_none() || self.common_bridge_tokens(from, to).next().is_none() {
                    return Vec::new();
                }
                from.tokens.values().map(supported).collect()
            }
        }
    }

    /// Symbols bridgeable on both chains, in symbol order.
    fn common_bridge_tokens<'a>(&'a self, from: &'a Chain, to: &'a Chain) -> impl Iterator<Item = &'a str> {
        from.tokens
            .values()
            .filter(move |t| t.bridgeable && to.token(&t.symbol).is_some_and(|o| o.bridgeable))
            .map(|t| t.symbol.as_str())
    }

    /// The token bridged between `token_in` on `chain_in` and `token_out` on `chain_out`: `token_in` when it
    /// is bridgeable on both chains, else `token_out` when it is, else the first of
    /// [`FeeSettings::bridge_token_preference`] bridgeable on both, else the first such symbol in symbol
    /// order. `None` when no token is bridgeable on both chains (or a chain is unknown).
    pub fn bridge_token(&self, chain_in: &str, chain_out: &str, token_in: &str, token_out: &str) -> Option<String> {
        let (from, to) = (self.chain(chain_in)?, self.chain(chain_out)?);
        let both = |s: &str| from.token(s).is_some_and(|t| t.bridgeable) && to.token(s).is_some_and(|t| t.bridgeable);
        [token_in, token_out]
            .into_iter()
            .chain(self.fees.bridge_token_preference.iter().map(String::as_str))
            .find(|s| both(s))
            .or_else(|| self.common_bridge_tokens(from, to).next())
            .map(str::to_owned)
    }
}

/// `text` cut to 64 characters (with `…`), so that error messages never echo huge inputs.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The JSON number of a USD value: the `f64` nearest to the exact decimal (round-half-even, through the
/// correctly rounded `str::parse::<f64>` of its positional form). Its JSON text is the exact decimal
/// whenever that has at most 15 significant digits.
pub fn usd_number(value: Decimal) -> DecimalNumber {
    value.to_string().parse::<f64>().ok().and_then(|f| DecimalNumber::try_from(f).ok()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------------
// TOML merging and resolution
// ---------------------------------------------------------------------------------------------------

/// Deep merge: tables merge key by key, everything else is replaced.
fn merge_tables(base: &mut toml::Table, over: toml::Table) {
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

// ---------------------------------------------------------------------------------------------------
// Address validation
// ---------------------------------------------------------------------------------------------------

/// Whether `address` is a valid account address of `family` (see the module documentation).
pub fn address_is_valid(family: Family, address: &str) -> bool {
    match family {
        Family::Evm => is_evm(address),
        Family::Solana => (32..=44).contains(&address.len()) && base58_decode(address).is_some_and(|b| b.len() == 32),
        Family::Tron => is_tron(address),
        Family::Ton => is_ton(address),
        Family::Starknet => is_starknet(address),
        Family::Stellar => {
            (address.len() == 56 && strkey_decode(address, STRKEY_ACCOUNT).is_some_and(|p| p.len() == 32))
                || (address.len() == 69 && strkey_decode(address, STRKEY_MUXED).is_some_and(|p| p.len() == 40))
        }
    }
}

/// Whether `address` is a valid token address of `family`: an account address, or on Stellar an asset
/// `CODE:ISSUER` (code of 1 to 12 ASCII letters and digits, issuer a `G…` account).
pub fn token_address_is_valid(family: Family, address: &str) -> bool {
    match family {
        Family::Stellar => address.split_once(':').is_some_and(|(code, issuer)| {
            (1..=12).contains(&code.len())
                && code.bytes().all(|b| b.is_ascii_alphanumeric())
                && issuer.len() == 56
                && strkey_decode(issuer, STRKEY_ACCOUNT).is_some()
        }),
        other => address_is_valid(other, address),
    }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_evm(a: &str) -> bool {
    a.len() == 42 && a.starts_with("0x") && is_hex(&a[2..])
}

fn is_starknet(a: &str) -> bool {
    let Some(digits) = a.strip_prefix("0x") else {
        return false;
    };
    if digits.len() > 64 || !is_hex(digits) {
        return false;
    }
    let significant = digits.trim_start_matches('0');
    // below 2^251 = 0x8 followed by 62 zeros (63 digits)
    significant.len() < 63 || (significant.len() == 63 && significant.as_bytes()[0] < b'8')
}

fn is_tron(a: &str) -> bool {
    if a.len() != 34 || !a.starts_with('T') {
        return false;
    }
    let Some(bytes) = base58_decode(a) else {
        return false;
    };
    if bytes.len() != 25 || bytes[0] != 0x41 {
        return false;
    }
    let check = sha256(&sha256(&bytes[..21]));
    bytes[21..] == check[..4]
}

fn is_ton(a: &str) -> bool {
    if let Some((wc, hash)) = a.split_once(':') {
        return (wc == "0" || wc == "-1") && hash.len() == 64 && is_hex(hash);
    }
    if a.len() != 48 {
        return false;
    }
    let Some(bytes) = base64_decode_any(a) else {
        return false;
    };
    if bytes.len() != 36 {
        return false;
    }
    let tag_ok = bytes[0] == 0x11 || bytes[0] == 0x51;
    let wc_ok = bytes[1] == 0x00 || bytes[1] == 0xff;
    tag_ok && wc_ok && crc16_xmodem(&bytes[..34]).to_be_bytes() == bytes[34..]
}

// ---------------------------------------------------------------------------------------------------
// Encodings: hex, base58(check), base32 strkeys, base64url, CRC16-XModem, SHA-256
// ---------------------------------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

fn base58_encode(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    let mut digits: Vec<u8> = Vec::new(); // base58 digits, little-endian
    for &byte in &bytes[zeros..] {
        let mut carry = u32::from(byte);
        for d in digits.iter_mut() {
            carry += u32::from(*d) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let mut out = "1".repeat(zeros);
    out.extend(digits.iter().rev().map(|&d| BASE58[d as usize] as char));
    out
}

fn base58_decode(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() {
        return None;
    }
    let zeros = s.bytes().take_while(|&b| b == b'1').count();
    let mut bytes: Vec<u8> = Vec::new(); // little-endian
    for c in s.bytes().skip(zeros) {
        let mut carry = BASE58.iter().position(|&a| a == c)? as u32;
        for b in bytes.iter_mut() {
            carry += u32::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let mut out = vec![0u8; zeros];
    out.extend(bytes.iter().rev());
    Some(out)
}

fn base58check_encode(payload: &[u8]) -> String {
    let check = sha256(&sha256(payload));
    let mut bytes = payload.to_vec();
    bytes.extend_from_slice(&check[..4]);
    base58_encode(&bytes)
}

const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const STRKEY_ACCOUNT: u8 = 6 << 3; // 'G'
const STRKEY_MUXED: u8 = 12 << 3; // 'M'

fn base32_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(BASE32[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(BASE32[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = BASE32.iter().position(|&a| a == c)? as u32;
        buffer = ((buffer << 5) | v) & 0xffff;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push(((buffer >> bits) & 0xff) as u8);
        }
    }
    // Canonical encodings have zero padding bits.
    if bits >= 5 || (buffer & ((1 << bits) - 1)) != 0 {
        return None;
    }
    Some(out)
}

fn stellar_strkey(version: u8, payload: &[u8]) -> String {
    let mut bytes = vec![version];
    bytes.extend_from_slice(payload);
    let crc = crc16_xmodem(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    base32_encode(&bytes)
}

/// The payload of a strkey of `version`, when the text is canonical and its checksum matches.
fn strkey_decode(s: &str, version: u8) -> Option<Vec<u8>> {
    let bytes = base32_decode(s)?;
    if bytes.len() < 3 || bytes[0] != version {
        return None;
    }
    let (body, crc) = bytes.split_at(bytes.len() - 2);
    (crc16_xmodem(body).to_le_bytes() == crc).then(|| body[1..].to_vec())
}

/// The ed25519 key of the sandbox's Stellar deposit account (muxed deposit addresses resolve to it).
fn stellar_base_key() -> [u8; 32] {
    sha256(b"bridge-sandbox/stellar-deposit-base-account")
}

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url of a length that is a multiple of 3.
fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(BASE64URL[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Unpadded base64, url-safe or standard alphabet (a length that is a multiple of 4).
fn base64_decode_any(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        match c {
            b'+' => Some(62),
            b'/' => Some(63),
            _ => BASE64URL.iter().position(|&a| a == c).map(|p| p as u32),
        }
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | value(c)?;
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    Some(out)
}

fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// SHA-256 (FIPS 180-4).
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (i, word) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_vectors() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let long = [b'a'; 1000];
        assert_eq!(hex(&sha256(&long)), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
    }

    #[test]
    fn base58_roundtrip() {
        for bytes in [vec![], vec![0], vec![0, 0, 1], vec![255; 32], (0..32).collect::<Vec<u8>>()] {
            assert_eq!(base58_decode(&base58_encode(&bytes)).unwrap_or_default(), bytes);
        }
    }

    #[test]
    fn real_addresses_validate() {
        assert!(address_is_valid(Family::Tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"));
        assert!(!address_is_valid(Family::Tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"));
        assert!(address_is_valid(Family::Solana, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"));
        assert!(address_is_valid(Family::Ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"));
        assert!(!address_is_valid(Family::Ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDt"));
        assert!(address_is_valid(Family::Stellar, "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN"));
        assert!(!address_is_valid(Family::Stellar, "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVM"));
        assert!(address_is_valid(
            Family::Starknet,
            "0x049d36570d4e46f48e99674bd3fcc84644ddd6b96f7c741b1562b82f9e004dc7"
        ));
        assert!(!address_is_valid(
            Family::Starknet,
            "0x849d36570d4e46f48e99674bd3fcc84644ddd6b96f7c741b1562b82f9e004dc7"
        ));
    }
}
