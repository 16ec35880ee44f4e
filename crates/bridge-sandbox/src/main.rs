//! `bridge-sandbox`: the whole bridge service, locally. `bridge-sandbox --help` explains the commands.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bridge_sandbox::admin::{self, Admin};
use bridge_sandbox::clock::ClockMode;
use bridge_sandbox::store::access::time;
use bridge_sandbox::SandboxConfig;
use bridge_server::ErrorsMode;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// A local, stateful bridge service for integration work: exact to the contract, kept in one SQLite file (or a
/// PostgreSQL database shared by several instances).
///
/// Quick start:
///   bridge-sandbox serve                      # serves http://127.0.0.1:8080 (API reference at /docs)
///   bridge-sandbox token --project my-app     # prints a bearer token that sandbox accepts
///   bridge-sandbox api-key --project my-app   # prints an API key (exchanged for a token at /authentication/auth/apiKey)
///
/// Running a shared sandbox (every command works on the sandbox's --data directory or --database-url, also while it
/// serves; every instance follows a change within a second, without a restart):
///   bridge-sandbox api-key list --project my-app      # ids, names, created, last use
///   bridge-sandbox api-key revoke key_0123abcd...     # refused at once, and so are the tokens exchanged from it
///   bridge-sandbox project list                       # projects, their keys, last activity
///   bridge-sandbox project disable my-app             # every token and key of it refused (401); data kept
///   bridge-sandbox signing-key rotate                 # new tokens use a new key; older tokens stay valid
///   bridge-sandbox audit                              # who changed which project or key, and when
#[derive(Parser)]
#[command(name = "bridge-sandbox", version, about, long_about, verbatim_doc_comment)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which sandbox a command works on: its data directory, or its PostgreSQL database.
#[derive(Args, Clone)]
struct StoreArgs {
    /// Data directory of the sandbox (the one `serve --data` uses).
    #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
    data: PathBuf,
    /// The PostgreSQL database of the sandbox (instead of --data).
    #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
    database_url: Option<String>,
}

impl StoreArgs {
    async fn admin(&self) -> anyhow::Result<Admin> {
        bridge_sandbox::admin(&self.data, self.database_url.as_deref()).await
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve the whole API (and /openapi.json, /docs) until Ctrl-C or SIGTERM.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080", env = "BRIDGE_SANDBOX_LISTEN")]
        listen: SocketAddr,
        /// Data directory: the database (sandbox.db) and the webhook key (keys/), made on first start.
        #[arg(long, default_value = "sandbox-data", env = "BRIDGE_SANDBOX_DATA")]
        data: PathBuf,
        /// Keep everything in this PostgreSQL database instead of the data directory
        /// (`postgres://user:password@host:port/database`). Several instances may share one database, behind any
        /// HTTP load balancer: they share the signing keys, the projects and API keys, the clock, the counters, the
        /// lifecycle and the webhook deliveries.
        #[arg(long, env = "BRIDGE_SANDBOX_DATABASE_URL")]
        database_url: Option<String>,
        /// `real`: time passes by itself (plus POST /sandbox/clock/advance); `manual`: only advances move it.
        #[arg(long, value_enum, default_value = "real")]
        clock: ClockMode,
        /// A TOML file with catalogue overrides (chains, tokens, prices, fees), merged over the built-in defaults.
        #[arg(long)]
        catalogue: Option<PathBuf>,
        /// Decode errors report the first failing property (like the production service) or all of them.
        #[arg(long, value_enum, default_value = "first")]
        errors: Errors,
    },
    /// Print a bearer token (JWT) for a project, signed with the sandbox's current signing key. A project seen for
    /// the first time is created. The token is refused once the project is disabled.
    Token {
        /// The project id (becomes `userId` in records).
        #[arg(long)]
        project: String,
        /// Enable post-bridge actions (`postBridgeData`) for the project.
        #[arg(long)]
        post_bridge: bool,
        /// Hours until the token expires.
        #[arg(long, default_value_t = 24)]
        ttl_hours: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print a new API key for a project (or list or revoke keys): `POST /authentication/auth/apiKey` exchanges it
    /// for a bearer token, and the event feed accepts it as `x-api-key`. The key is shown once, here: the sandbox
    /// keeps only its hash. It does not expire; revoke it with `api-key revoke`. A project seen for the first
    /// time is created.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    ApiKey {
        #[command(subcommand)]
        command: Option<ApiKeyCommand>,
        /// The project id (becomes `userId` in records).
        #[arg(long, required = true)]
        project: Option<String>,
        /// A name to tell the key from the project's others (`ci`, `alice's laptop`).
        #[arg(long, default_value = "unnamed")]
        name: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List projects, disable a project (every token and key of it refused) or enable it again.
    Project {
        #[command(subcommand)]
        command: ProjectCommand,
    },
    /// Rotate the JWT signing key (new tokens use a new key; tokens of the old one stay valid until they expire),
    /// or list the keys.
    SigningKey {
        #[command(subcommand)]
        command: SigningKeyCommand,
    },
    /// List the changes made to projects and keys: when, by whom ($USER of the command, or `sandbox` for what an
    /// instance did by itself), and what changed. Oldest first.
    Audit {
        /// Only the entries of this project.
        #[arg(long)]
        project: Option<String>,
        /// How many of the latest entries.
        #[arg(long, default_value_t = 50)]
        limit: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum ApiKeyCommand {
    /// List API keys: id, project, name, when made, last use (written by the instances every few seconds), state.
    List {
        /// Only the keys of this project (default: every project's).
        #[arg(long)]
        project: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke an API key: every instance refuses it, and the tokens exchanged from it, within a second.
    Revoke {
        /// The key's id (`key_…`, from `api-key list`) or the key itself (`sbx_…`).
        key_or_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum ProjectCommand {
    /// List projects: state, when first seen, last activity, and their API keys.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Disable a project: its tokens and API keys are refused (401 Unauthorized) on every instance within a
    /// second. Its data is kept; `project enable` restores access.
    Disable {
        /// The project id.
        project: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Enable a disabled project again: its tokens and keys that are still valid are accepted.
    Enable {
        /// The project id.
        project: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Subcommand)]
enum SigningKeyCommand {
    /// Make a new JWT signing key: new tokens use it (the `kid` in their header names it). The key it replaces
    /// keeps verifying its tokens until the last of them expires (at least an hour, for tokens the API-key exchange
    /// signed), then retires. Running instances pick it up within a second.
    Rotate {
        /// Retire the replaced keys at once (their secret leaked): every token they signed is refused.
        #[arg(long)]
        retire_now: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List the signing keys: which one signs new tokens, until when the others verify theirs.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Errors {
    First,
    All,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { listen, data, database_url, clock, catalogue, errors } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "info,tower_http=info".into()),
                )
                .init();
            let errors = match errors {
                Errors::First => ErrorsMode::First,
                Errors::All => ErrorsMode::All,
            };
            let config = SandboxConfig { listen, data_dir: data, database_url, clock, catalogue, errors };
            bridge_sandbox::serve(config, bridge_sandbox::shutdown_signal()).await
        }
        Command::Token { project, post_bridge, ttl_hours, store } => {
            let ttl = Duration::from_secs(ttl_hours.saturating_mul(3600));
            println!("{}", store.admin().await?.mint_token(&project, post_bridge, ttl).await?);
            Ok(())
        }
        Command::ApiKey { command: None, project, name, store } => {
            let project = project.unwrap_or_default();
            let key = store.admin().await?.create_api_key(&project, &name).await?;
            eprintln!(
                "API key {} \"{}\" of project {project}: shown once, here; the sandbox keeps only its hash.",
                key.record.id, key.record.name
            );
            println!("{}", key.text);
            Ok(())
        }
        Command::ApiKey { command: Some(ApiKeyCommand::List { project, store }), .. } => {
            print!("{}", admin::render_keys(&store.admin().await?.api_keys(project.as_deref()).await?));
            Ok(())
        }
        Command::ApiKey { command: Some(ApiKeyCommand::Revoke { key_or_id, store }), .. } => {
            let revoked = store.admin().await?.revoke_api_key(&key_or_id).await?;
            let key = &revoked.key;
            let at = key.revoked_ms.map(time).unwrap_or_default();
            match revoked.already {
                true => println!("API key {} \"{}\" of project {} was revoked already ({at})", key.id, key.name, key.project),
                false => println!(
                    "API key {} \"{}\" of project {} revoked ({at}): every instance refuses it, and the tokens exchanged from it, within a second",
                    key.id, key.name, key.project
                ),
            }
            Ok(())
        }
        Command::Project { command: ProjectCommand::List { store } } => {
            print!("{}", admin::render_projects(&store.admin().await?.projects().await?));
            Ok(())
        }
        Command::Project { command: ProjectCommand::Disable { project, store } } => {
            let change = store.admin().await?.set_disabled(&project, true).await?;
            let new = if change.created { " (a new project)" } else { "" };
            match change.changed {
                true => println!("project {project}{new} disabled: every instance refuses its tokens and keys within a second; its data is kept"),
                false => println!("project {project} was disabled already"),
            }
            Ok(())
        }
        Command::Project { command: ProjectCommand::Enable { project, store } } => {
            let change = store.admin().await?.set_disabled(&project, false).await?;
            match (change.changed, change.created) {
                (true, _) => {
                    println!("project {project} enabled: its tokens and keys are accepted again within a second")
                }
                (false, true) => println!("project {project} created, enabled"),
                (false, false) => println!("project {project} was enabled already"),
            }
            Ok(())
        }
        Command::SigningKey { command: SigningKeyCommand::Rotate { retire_now, store } } => {
            let admin = store.admin().await?;
            let new = admin.rotate_signing_key(retire_now).await?;
            println!("signing key {} made: new tokens use it; every instance picks it up within a second", new.kid);
            print!("{}", admin::render_signing_keys(&admin.signing_keys().await?, bridge_sandbox::clock::wall_ms()));
            Ok(())
        }
        Command::SigningKey { command: SigningKeyCommand::List { store } } => {
            let keys = store.admin().await?.signing_keys().await?;
            print!("{}", admin::render_signing_keys(&keys, bridge_sandbox::clock::wall_ms()));
            Ok(())
        }
        Command::Audit { project, limit, store } => {
            print!("{}", admin::render_audit(&store.admin().await?.audit(project.as_deref(), limit).await?));
            Ok(())
        }
    }
}
