//! The bridge and token configuration (production endpoints beyond the spec): what the catalogue holds, in
//! production's shapes, so that a client that reads the configuration asks only for what quotes accept. A chain's
//! bridge `tokens` are its bridgeable tokens (what a bridge quote takes on both ends); its bridge-swap tokens are
//! all its tokens (a bridge-swap quote swaps any of them to or from a bridge token).

use bridge_contract::operations::{GetBridgeConfigsError, GetBridgeSwapTokenConfigsError, GetBridgeTokenConfigError};
use bridge_contract::{
    BridgeChainConfig, BridgeConfigs, BridgeTokenEntry, ChainStatus, ChainType, ExtendedTokenEntry,
    GetBridgeTokenConfigPath, InvalidToken, InvalidTokenForChain, SwapTokenConfig, SwapTokenConfigs,
    TokenListingReason, TokenListingState, TokenListingStatus,
};

use crate::domain::catalogue::{usd_number, Chain, Family, Token};
use crate::infra::core::Core;

/// Production's kind of chain for a catalogue family.
fn chain_type(family: Family) -> ChainType {
    match family {
        Family::Evm => ChainType::Evm,
        Family::Solana => ChainType::Sol,
        Family::Stellar => ChainType::Stellar,
        Family::Tron => ChainType::Tron,
        Family::Ton => ChainType::Ton,
        Family::Starknet => ChainType::Stk,
    }
}

/// The made-up CoinGecko id of a token (the sandbox has no market data).
fn coingecko_id(token: &Token) -> String {
    token.symbol.to_lowercase()
}

fn token_entry(token: &Token) -> BridgeTokenEntry {
    BridgeTokenEntry {
        token: token.symbol.clone(),
        address: token.address.clone(),
        decimals: u64::from(token.decimals),
        coingecko_id: coingecko_id(token),
        max_deposit_limit: Some(usd_number(token.max_deposit)),
        max_withdraw_limit: Some(usd_number(token.max_withdraw)),
        min_amount_usd_in_contract: None,
    }
}

fn chain_config(chain: &Chain) -> BridgeChainConfig {
    let lower = chain.id.to_lowercase();
    BridgeChainConfig {
        name: chain.id.clone(),
        r#type: chain_type(chain.family),
        network_id: chain.id.clone(),
        contract_address: String::new(),
        confirmation_blocks: u64::from(chain.confirmations),
        avg_block_time: usd_number(
            rust_decimal::Decimal::from(chain.block_time_ms) / rust_decimal::Decimal::from(1000),
        ),
        native_token_name: chain.native_symbol.clone(),
        native_token_decimals: u64::from(chain.native_decimals),
        native_token_safeguard: usd_number(rust_decimal::Decimal::ZERO),
        block_explorer: format!("https://explorer.sandbox.invalid/{lower}"),
        rpc: format!("https://rpc.sandbox.invalid/{lower}"),
        site: format!("https://{lower}.sandbox.invalid"),
        status: ChainStatus::Enabled,
        tokens: chain.tokens.values().filter(|t| t.bridgeable).map(|t| (t.symbol.clone(), token_entry(t))).collect(),
        gas_boost_enabled: true,
        enabled_deposit_address: true,
    }
}

impl Core {
    /// `GET /bridge/configs`.
    pub async fn get_bridge_configs(&self) -> Result<BridgeConfigs, GetBridgeConfigsError> {
        Ok(self.catalogue.chains().map(|c| (c.id.clone(), chain_config(c))).collect())
    }

    /// `GET /bridge/config/{chain}/{token}`: a bridgeable token of a chain.
    pub async fn get_bridge_token_config(
        &self,
        path: GetBridgeTokenConfigPath,
    ) -> Result<ExtendedTokenEntry, GetBridgeTokenConfigError> {
        let known_symbol = self.catalogue.chains().any(|c| c.token(&path.token).is_some_and(|t| t.bridgeable));
        if !known_symbol {
            return Err(InvalidToken::new(format!("no chain has a token {}", path.token)).into());
        }
        let token = self.catalogue.chain(&path.chain).and_then(|c| c.token(&path.token)).filter(|t| t.bridgeable);
        let Some(token) = token else {
            return Err(InvalidTokenForChain::new(format!("chain {} has no token {}", path.chain, path.token)).into());
        };
        let entry = token_entry(token);
        Ok(ExtendedTokenEntry {
            decimals: entry.decimals,
            coingecko_id: entry.coingecko_id,
            max_deposit_limit: entry.max_deposit_limit,
            max_withdraw_limit: entry.max_withdraw_limit,
            min_amount_usd_in_contract: entry.min_amount_usd_in_contract,
            token: entry.token,
            address: entry.address,
            chain: path.chain,
        })
    }

    /// `GET /bridge/bridge-swap-token-configs`: every token of every chain (bridge-swap quotes take any of them).
    pub async fn get_bridge_swap_token_configs(&self) -> Result<SwapTokenConfigs, GetBridgeSwapTokenConfigsError> {
        let aggregator = self.catalogue.fees().aggregator;
        Ok(self
            .catalogue
            .chains()
            .map(|c| {
                let tokens = c
                    .tokens
                    .values()
                    .map(|t| SwapTokenConfig {
                        chain: c.id.clone(),
                        token_address: t.address.clone(),
                        name: t.symbol.clone(),
                        symbol: t.symbol.clone(),
                        decimals: u64::from(t.decimals),
                        icon_url: format!("https://icons.sandbox.invalid/{}.svg", t.symbol.to_lowercase()),
                        aggregators: vec![aggregator],
                        status: TokenListingStatus {
                            state: TokenListingState::Listed,
                            reason: vec![TokenListingReason::ConfigSync],
                        },
                        coingecko_id: Some(coingecko_id(t)),
                    })
                    .collect();
                (c.id.clone(), tokens)
            })
            .collect())
    }
}
