//! The sandbox's catalogue: chains, tokens, USD prices, deposit and withdraw limits, fee settings,
//! promotions, sponsored projects and swap settings.
//!
//! * this module: the model ([`Catalogue`], [`Chain`], [`Token`], [`FeeSettings`]) and what is looked up in it;
//! * `file`: the built-in catalogue (`src/domain/catalogue/default.toml`, compiled in) and how a config file is merged
//!   over it ([`Catalogue::from_toml`], [`Catalogue::with_overrides`]): tables merge key by key, any other value
//!   (string, number, array) replaces the built-in one, `enabled = false` removes a chain or a token, and
//!   `inherit_builtin = false` at the top of a file makes it a complete catalogue of its own. Every amount and
//!   price is an exact decimal (write them as strings, `"0.1"`; TOML numbers are accepted and read through their
//!   shortest decimal form). Token fields are looked up on the token (`[chains.X.tokens.Y]`), then on its symbol
//!   (`[symbols.Y]`): a symbol carries the defaults (price, decimals, limits) that a chain may override, as BINANCE
//!   does for the 18-decimal stablecoins;
//! * `address`: addresses per chain family, validated with their checksums, and the deterministic deposit
//!   addresses ([`Catalogue::deposit_address`]).

mod address;
mod file;

use std::collections::BTreeMap;
use std::fmt;

use bridge_contract::{Aggregator, ChainMetadata, DecimalNumber, DecimalString, Speed, SupportedToken};
use rust_decimal::Decimal;
use serde::Deserialize;

pub use address::{address_is_valid, token_address_is_valid};
pub use file::BUILTIN_TOML;

/// Largest token decimals the catalogue accepts (keeps every product within rust_decimal's 28 places).
pub const MAX_TOKEN_DECIMALS: u32 = 18;
/// Largest number of decimal places of a USD price.
pub const MAX_PRICE_SCALE: u32 = 6;
/// Largest number of decimal places of a percentage setting.
pub const MAX_PERCENT_SCALE: u32 = 2;

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

/// A project's deposit-address creation limits (`[deposit_address_limits]`, per project in
/// `[projects.X.deposit_address_limits]`): `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressLimits {
    /// Addresses the project may have in all.
    pub total: Option<u64>,
    /// Addresses the project may create in any window of `window_ms`.
    pub window: Option<u64>,
    pub window_ms: u64,
}

/// The default limits and each configured project's.
#[derive(Debug, Clone)]
pub struct AddressLimitSettings {
    pub default: AddressLimits,
    pub projects: BTreeMap<String, AddressLimits>,
}

/// A catalogue file that cannot be read or is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid catalogue: {message}")]
pub struct CatalogueError {
    pub message: String,
}

impl CatalogueError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// Chains by id, and the fee settings.
#[derive(Debug, Clone)]
pub struct Catalogue {
    /// The merged TOML the catalogue was made from (what overrides merge over).
    raw: toml::Table,
    chains: BTreeMap<String, Chain>,
    fees: FeeSettings,
    address_limits: AddressLimitSettings,
}

impl Catalogue {
    /// The built-in catalogue (`src/catalogue/default.toml`).
    pub fn builtin() -> Catalogue {
        let raw: toml::Table = toml::from_str(BUILTIN_TOML).expect("the built-in catalogue is valid TOML");
        file::from_table(raw).expect("the built-in catalogue is consistent")
    }

    /// A catalogue from a config file: merged over the built-in one, unless the file says
    /// `inherit_builtin = false` (then it is complete by itself).
    pub fn from_toml(text: &str) -> Result<Catalogue, CatalogueError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| CatalogueError::new(e.to_string()))?;
        match table.get("inherit_builtin") {
            Some(toml::Value::Boolean(false)) => file::from_table(table),
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
        file::merge_tables(&mut raw, over);
        file::from_table(raw)
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

    /// The deposit-address creation limits of `project_id`.
    pub fn address_limits(&self, project_id: &str) -> AddressLimits {
        self.address_limits.projects.get(project_id).copied().unwrap_or(self.address_limits.default)
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

    /// A fresh deposit address on `chain` from `seed` (deterministic, valid for the chain's family), with
    /// chainMetadata for Stellar (a muxed M... address whose base G... address and memo id are in the metadata).
    pub fn deposit_address(&self, chain: &str, seed: u64) -> Option<(String, Option<ChainMetadata>)> {
        let c = self.chain(chain)?;
        Some(address::deposit_address(c.family, &c.id, seed))
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
