//! A throw-away PostgreSQL server for the tests: `initdb` into a temporary directory, `pg_ctl start` on a free
//! port of 127.0.0.1, a fresh database per test, stopped (`pg_ctl stop -m immediate`) when the last test using it
//! lets go. The binaries come from `PATH` or `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package). Without
//! them the PostgreSQL tests skip with a printed reason, except in CI (`CI` set), where they fail.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

pub struct PgServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// Run the binaries as this user (PostgreSQL refuses to run as root).
    user: Option<String>,
}

static SHARED: Mutex<Weak<PgServer>> = Mutex::new(Weak::new());
static DATABASES: AtomicU32 = AtomicU32::new(0);

/// The directory holding `initdb`, `pg_ctl` and `createdb` (PATH may hold links to some of them only: the
/// directory is the one `initdb` links to).
fn binaries() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        let initdb = std::env::split_paths(&paths).map(|p| p.join("initdb")).find(|p| p.is_file())?;
        Some(std::fs::canonicalize(initdb).ok()?.parent()?.to_owned())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

/// The binaries' directory, or `None` (with the reason printed) when PostgreSQL is not installed outside CI.
fn installed() -> Option<PathBuf> {
    let bin = binaries();
    if bin.is_none() {
        let reason = "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin; \
                      `apt-get install postgresql`)";
        if std::env::var_os("CI").is_some() {
            panic!("{reason}: CI must run the PostgreSQL tests");
        }
        eprintln!("skipping a PostgreSQL test: {reason}");
    }
    bin
}

/// A database of its own on the shared test server, or `None` (with the reason printed) when PostgreSQL is not
/// installed outside CI.
pub fn database() -> Option<(Arc<PgServer>, String)> {
    let server = {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        match shared.upgrade() {
            Some(server) => server,
            None => {
                let server = Arc::new(PgServer::start(installed()?));
                *shared = Arc::downgrade(&server);
                server
            }
        }
    };
    let url = server.create_database();
    Some((server, url))
}

/// A server of the caller's own (not the shared one), for a test that stops and starts it; `None` as
/// [`database`].
pub fn dedicated() -> Option<PgServer> {
    Some(PgServer::start(installed()?))
}

impl PgServer {
    fn start(bin: PathBuf) -> Self {
        let dir = tempfile::Builder::new().prefix("sandbox-pg").tempdir().expect("a temporary directory");
        // PostgreSQL refuses to run as root: as root (`id -u` is 0), its binaries run as `postgres`.
        let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false);
        let user = root.then(|| "postgres".to_owned());
        if let Some(user) = &user {
            let status = Command::new("chown").args(["-R", user]).arg(dir.path()).status().expect("chown runs");
            assert!(status.success(), "chown of the PostgreSQL test directory to {user}");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = Self { bin, dir, port, user };
        let data = server.data();
        server.run("initdb", &["-D", &data, "-U", "sandbox", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        server.restart();
        eprintln!("PostgreSQL test server on 127.0.0.1:{port} ({})", server.dir.path().display());
        server
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// A new database on this server: its URL.
    pub fn create_database(&self) -> String {
        let name = format!("sandbox_{}_{}", std::process::id(), DATABASES.fetch_add(1, Ordering::SeqCst));
        self.run("createdb", &["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "sandbox", &name]);
        format!("postgres://sandbox@127.0.0.1:{}/{name}", self.port)
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`), as a crash or a lost database host would.
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    /// Starts the stopped server again, on the same port and data.
    pub fn restart(&self) {
        let options = format!("-p {} -h 127.0.0.1 -k {} -c fsync=off", self.port, self.dir.path().display());
        let log = self.dir.path().join("server.log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "-t", "60", "start"]);
    }

    /// Everything the database at `url` holds, as `pg_dump` writes it (plain SQL, data included): what a backup
    /// of it would hold.
    pub fn dump(&self, url: &str) -> String {
        self.run("pg_dump", &["--no-owner", url])
    }

    /// Runs one of the server's binaries (as the unprivileged user when the tests run as root); panics with its
    /// output if it fails, else returns its standard output.
    fn run(&self, program: &str, args: &[&str]) -> String {
        let path = self.bin.join(program);
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let output = command.args(args).output().unwrap_or_else(|e| panic!("running {}: {e}", path.display()));
        assert!(
            output.status.success(),
            "{} {args:?} failed: {}{}",
            path.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.data();
        let path = self.bin.join("pg_ctl");
        let mut command = match &self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&path);
                c
            }
            None => Command::new(&path),
        };
        let _ = command.args(["-D", &data, "-m", "immediate", "-w", "stop"]).output();
    }
}
