//! Addresses per chain family: what a valid account or token address looks like, and the deterministic deposit
//! addresses the sandbox makes (valid for their family, checksums included). The encodings and hashes are the
//! well-known crates': `sha2` (SHA-256), `hex`, `bs58` (base58 and base58check), `data-encoding` (base32 strkeys,
//! base64url) and `crc` (CRC-16/XMODEM).
//!
//! | family | accepted |
//! |---|---|
//! | EVM | `0x` + 40 hex digits (any case; the EIP-55 mixed-case checksum is not verified) |
//! | Solana | base58 that decodes to 32 bytes (32–44 characters) |
//! | Tron | base58check `T…`, 34 characters: 25 bytes `0x41` + 20 + 4-byte double-SHA-256 checksum |
//! | TON | user-friendly `EQ…`/`UQ…` (48 characters of base64url or base64: tag, workchain 0 or -1, hash, CRC16) or raw `0:<64 hex>` / `-1:<64 hex>` |
//! | Starknet | `0x` + 1–64 hex digits, value below 2^251 |
//! | Stellar | strkey `G…` (56 characters) or muxed `M…` (69 characters), CRC16 checked; token addresses are `CODE:G…` |

use std::sync::LazyLock;

use bridge_contract::{ChainMetadata, StellarChainMetadata};
use data_encoding::{Encoding, BASE32_NOPAD, BASE64URL_NOPAD};
use sha2::{Digest, Sha256};

use super::Family;

/// Stellar strkey version bytes: `G…` account ids and `M…` muxed accounts.
const STRKEY_ACCOUNT: u8 = 6 << 3;
const STRKEY_MUXED: u8 = 12 << 3;
/// TON user-friendly address tags (bounceable `EQ…`, non-bounceable `UQ…`) and the one deposit addresses use.
const TON_BOUNCEABLE: u8 = 0x11;
const TON_NON_BOUNCEABLE: u8 = 0x51;
/// Tron's address prefix byte (`T…` in base58check).
const TRON_PREFIX: u8 = 0x41;

const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);

/// Unpadded base64 in either alphabet (TON wallets write both): the url-safe one, with `+` and `/` read as `-`
/// and `_`.
static BASE64_ANY: LazyLock<Encoding> = LazyLock::new(|| {
    let mut spec = BASE64URL_NOPAD.specification();
    spec.translate.from.push_str("+/");
    spec.translate.to.push_str("-_");
    spec.encoding().expect("a valid base64 specification")
});

/// Whether `address` is a valid account address of `family` (see the module documentation).
pub fn address_is_valid(family: Family, address: &str) -> bool {
    match family {
        Family::Evm => is_evm(address),
        Family::Solana => {
            (32..=44).contains(&address.len()) && bs58::decode(address).into_vec().is_ok_and(|b| b.len() == 32)
        }
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

/// The deposit address of `seed` on chain `chain_id` of `family`: derived from SHA-256 of the chain id and the
/// seed. On Stellar it is a muxed `M…` address over one sandbox base account `G…`, with the seed as memo id,
/// returned with its [`ChainMetadata::Stellar`].
pub fn deposit_address(family: Family, chain_id: &str, seed: u64) -> (String, Option<ChainMetadata>) {
    let bytes: [u8; 32] = Sha256::digest(format!("bridge-sandbox/deposit-address/{chain_id}/{seed}")).into();
    match family {
        Family::Evm => (format!("0x{}", hex::encode(&bytes[..20])), None),
        Family::Solana => (bs58::encode(bytes).into_string(), None),
        Family::Tron => {
            let mut payload = vec![TRON_PREFIX];
            payload.extend_from_slice(&bytes[..20]);
            (bs58::encode(payload).with_check().into_string(), None)
        }
        Family::Ton => {
            let mut raw = vec![TON_NON_BOUNCEABLE, 0x00];
            raw.extend_from_slice(&bytes);
            let crc = CRC16.checksum(&raw);
            raw.extend_from_slice(&crc.to_be_bytes());
            (BASE64URL_NOPAD.encode(&raw), None)
        }
        Family::Starknet => {
            let mut b = bytes;
            b[0] &= 0x07; // below 2^251
            (format!("0x{}", hex::encode(b)), None)
        }
        Family::Stellar => {
            let key: [u8; 32] = Sha256::digest(b"bridge-sandbox/stellar-deposit-base-account").into();
            let base = strkey(STRKEY_ACCOUNT, &key);
            let mut payload = key.to_vec();
            payload.extend_from_slice(&seed.to_be_bytes());
            let muxed = strkey(STRKEY_MUXED, &payload);
            let metadata = StellarChainMetadata::new(base, seed.to_string());
            (muxed, Some(ChainMetadata::Stellar(metadata)))
        }
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
    a.len() == 34
        && a.starts_with('T')
        && bs58::decode(a)
            .with_check(None)
            .into_vec()
            .is_ok_and(|payload| payload.len() == 21 && payload[0] == TRON_PREFIX)
}

fn is_ton(a: &str) -> bool {
    if let Some((wc, hash)) = a.split_once(':') {
        return (wc == "0" || wc == "-1") && hash.len() == 64 && is_hex(hash);
    }
    if a.len() != 48 {
        return false;
    }
    let Ok(bytes) = BASE64_ANY.decode(a.as_bytes()) else {
        return false;
    };
    let tag_ok = bytes[0] == TON_BOUNCEABLE || bytes[0] == TON_NON_BOUNCEABLE;
    let wc_ok = bytes[1] == 0x00 || bytes[1] == 0xff;
    bytes.len() == 36 && tag_ok && wc_ok && CRC16.checksum(&bytes[..34]).to_be_bytes() == bytes[34..]
}

/// A Stellar strkey: base32 of the version byte, the payload and its CRC-16 (little-endian).
fn strkey(version: u8, payload: &[u8]) -> String {
    let mut bytes = vec![version];
    bytes.extend_from_slice(payload);
    let crc = CRC16.checksum(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    BASE32_NOPAD.encode(&bytes)
}

/// The payload of a strkey of `version`, when the text is canonical base32 and its checksum matches.
fn strkey_decode(s: &str, version: u8) -> Option<Vec<u8>> {
    let bytes = BASE32_NOPAD.decode(s.as_bytes()).ok()?;
    if bytes.len() < 3 || bytes[0] != version {
        return None;
    }
    let (body, crc) = bytes.split_at(bytes.len() - 2);
    (CRC16.checksum(body).to_le_bytes() == crc).then(|| body[1..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn ton_addresses_read_either_base64_alphabet_but_not_padding() {
        let url_safe = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs";
        assert!(address_is_valid(Family::Ton, &url_safe.replace('_', "/")));
        assert!(!address_is_valid(Family::Ton, &url_safe.replace("sDs", "sD=")));
    }

    #[test]
    fn strkeys_are_canonical() {
        // The last character of a muxed address carries one padding bit, which must be zero.
        let (muxed, _) = deposit_address(Family::Stellar, "STELLAR", 7);
        assert!(address_is_valid(Family::Stellar, &muxed));
        let last = muxed.chars().last().unwrap();
        let bumped = BASE32_NOPAD.specification().symbols.chars().skip_while(|c| *c != last).nth(1).unwrap();
        let mut changed = muxed.clone();
        changed.pop();
        changed.push(bumped);
        assert!(!address_is_valid(Family::Stellar, &changed), "{changed}");
    }
}
