//! Which command starts moto's S3 server for the cloud tests: the moto installed on this machine
//! (`moto_server`, or `python3 -m moto.server`) when it runs, or else one the tests install
//! themselves into a virtual environment under the target folder, so that a machine with only
//! Rust and Python 3 runs `cargo test --workspace --all-features` as is.
//!
//! The installation happens once per target folder: every test thread waits on one `OnceLock`,
//! and every test process (the `it` tests, the cloud benchmark, a second `cargo test`) on a lock
//! file beside the virtual environment. A marker file written after pip succeeded says the
//! environment is complete, so an interrupted installation is redone rather than half used.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

/// The moto releases the tests run against: 5.2.1 installed by hand and 5.2.5 installed by these
/// tests were checked. A pin, so that a new moto cannot change the server under the tests.
const REQUIREMENT: &str = "moto[server]>=5.2.1,<5.3";

/// `KEEPSAKE_TEST_MOTO=venv` uses (installing it if needed) the target folder's moto even when
/// this machine has one: the way to test the installation itself.
const OVERRIDE: &str = "KEEPSAKE_TEST_MOTO";

/// Written into the virtual environment once pip has succeeded; holds [`REQUIREMENT`], so a
/// changed pin reinstalls.
const MARKER: &str = "keepsake-installed";

/// How many lines of a failed step's output a panic shows.
const TAIL_LINES: usize = 20;

/// A command that starts moto's server; the host and port arguments go after `args`.
pub struct Launcher {
    program: PathBuf,
    args: Vec<String>,
}

impl Launcher {
    fn new(program: impl Into<PathBuf>, args: &[&str]) -> Launcher {
        Launcher {
            program: program.into(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
        }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }

    /// The command as a person would type it, for messages.
    pub fn describe(&self) -> String {
        shell_words(&self.command())
    }

    /// Whether the server's program runs at all (`--help` imports moto's server and flask).
    fn runs(&self) -> bool {
        self.command()
            .arg("--help")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }
}

/// The launcher for this process, found (or installed) by the first test that needs one. A
/// failed installation is kept and reported by every test, not retried by each.
pub fn launcher() -> &'static Launcher {
    static LAUNCHER: OnceLock<Result<Launcher, String>> = OnceLock::new();
    let found = LAUNCHER.get_or_init(|| match std::env::var(OVERRIDE).as_deref() {
        Ok("venv") => provisioned(),
        Ok("") | Err(_) => installed().map_or_else(provisioned, Ok),
        Ok(other) => Err(format!("{OVERRIDE}={other}: expected `venv` (or unset)")),
    });
    found.as_ref().unwrap_or_else(|message| panic!("{message}"))
}

/// moto as installed on this machine, if it runs: the script on PATH, or the module (pip's
/// `--user` scripts folder is often not on PATH).
fn installed() -> Option<Launcher> {
    [
        Launcher::new("moto_server", &[]),
        Launcher::new("python3", &["-m", "moto.server"]),
    ]
    .into_iter()
    .find(Launcher::runs)
}

/// moto from the target folder's virtual environment, installed there first when needed.
fn provisioned() -> Result<Launcher, String> {
    let venv = venv_dir();
    provision(&venv)?;
    Ok(Launcher::new(venv_python(&venv), &["-m", "moto.server"]))
}

/// `<target>/tmp/keepsake-test-tools/moto-venv`: cargo gives integration tests and benchmarks
/// `<target>/tmp` for their files (`cargo clean` removes it with the rest).
fn venv_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("keepsake-test-tools")
        .join("moto-venv")
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Makes sure `venv` holds a working moto, holding the lock file meanwhile so that parallel test
/// processes neither install twice nor start a server from a half-installed environment.
fn provision(venv: &Path) -> Result<(), String> {
    let tools = venv.parent().expect("the venv folder has a parent");
    let lock_path = tools.join("moto-venv.lock");
    let lock = fs::create_dir_all(tools)
        .and_then(|()| {
            OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(false)
                .open(&lock_path)
        })
        .and_then(|file| file.lock().map(|()| file))
        .map_err(|error| format!("cannot lock {}: {error}", lock_path.display()))?;
    let installed = if ready(venv) { Ok(()) } else { install(venv) };
    drop(lock); // Unlocks: a waiting process now finds the marker (or tries again itself).
    installed
}

/// A complete installation of this pin whose Python still runs it (the base interpreter a venv
/// links to can be upgraded or removed under it).
fn ready(venv: &Path) -> bool {
    fs::read_to_string(venv.join(MARKER)).is_ok_and(|pin| pin == REQUIREMENT)
        && Launcher::new(venv_python(venv), &["-m", "moto.server"]).runs()
}

/// Creates the virtual environment afresh, installs moto into it, then writes the marker.
fn install(venv: &Path) -> Result<(), String> {
    // Straight to stderr: the test harness captures `eprintln!` from test threads, and this
    // message is for the person waiting on a run that pauses for pip.
    let _ = writeln!(
        std::io::stderr(),
        "installing {REQUIREMENT} into {} for the cloud tests (once)",
        venv.display()
    );
    let started = Instant::now();
    // Whatever is there is an interrupted or outdated installation.
    let _ = fs::remove_dir_all(venv);
    let mut steps = Steps::default();
    let mut pip = create_venv(venv, &mut steps)?;
    steps.must(pip.args([
        "install",
        "--no-input",
        "--disable-pip-version-check",
        REQUIREMENT,
    ]))?;
    let marker = venv.join(MARKER);
    fs::write(&marker, REQUIREMENT)
        .map_err(|error| format!("cannot write {}: {error}", marker.display()))?;
    let _ = writeln!(
        std::io::stderr(),
        "moto installed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs `python3 -m venv`; returns the pip command that installs into the new environment.
fn create_venv(venv: &Path, steps: &mut Steps) -> Result<Command, String> {
    let python = venv_python(venv);
    if steps.run(Command::new("python3").args(["-m", "venv"]).arg(venv)) {
        let mut pip = Command::new(python);
        pip.args(["-m", "pip"]);
        return Ok(pip);
    }
    if steps.could_not_start {
        steps
            .hints
            .push("No `python3` on PATH: the cloud tests need Python 3, with pip.");
        return Err(steps.failure());
    }
    // Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a package of its own
    // (python3-venv); without it, an environment without pip, filled by the system's pip
    // (`--python`, pip 22.3 or later), is the same environment.
    steps.hints.push(
        "`python3 -m venv` failed: on Debian and Ubuntu, `apt-get install python3-venv` gives \
         it pip, and the tests can then install moto themselves.",
    );
    let _ = fs::remove_dir_all(venv);
    steps.must(
        Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(venv),
    )?;
    let mut pip = Command::new("python3");
    pip.args(["-m", "pip", "--python"]).arg(python);
    Ok(pip)
}

/// The installation's steps so far, for the message when one fails.
#[derive(Default)]
struct Steps {
    tried: Vec<String>,
    last_failure: String,
    /// The last step's program did not start at all (not found, not executable).
    could_not_start: bool,
    hints: Vec<&'static str>,
}

impl Steps {
    /// Runs `command` with its output captured; false (the output's end kept) when it fails.
    fn run(&mut self, command: &mut Command) -> bool {
        let typed = shell_words(command);
        let output = command.stdin(Stdio::null()).output();
        self.could_not_start = output.is_err();
        let outcome = match output {
            Ok(output) if output.status.success() => None,
            Ok(output) => {
                let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&output.stderr));
                Some((output.status.to_string(), tail(&text)))
            }
            Err(error) => Some((format!("could not run: {error}"), format!("    {error}"))),
        };
        let Some((status, output_tail)) = outcome else {
            self.tried.push(format!("  {typed}  -> ok"));
            return true;
        };
        self.tried.push(format!("  {typed}  -> {status}"));
        self.last_failure = output_tail;
        false
    }

    /// [`run`](Self::run); when it fails, the message saying what was tried and what to do.
    fn must(&mut self, command: &mut Command) -> Result<(), String> {
        if self.run(command) {
            Ok(())
        } else {
            Err(self.failure())
        }
    }

    fn failure(&self) -> String {
        format!(
            "the cloud tests need moto (an S3-compatible test server), and installing it for \
             them failed.\n\
             Tried:\n{}\n\
             End of the last failed step's output:\n{}\n\
             {}\
             Or install moto yourself so that `moto_server` or `python3 -m moto.server` runs, \
             then run the tests again:\n  \
             python3 -m pip install --user '{REQUIREMENT}'\n  \
             (or: pipx install '{REQUIREMENT}')",
            self.tried.join("\n"),
            self.last_failure,
            self.hints
                .iter()
                .map(|hint| format!("{hint}\n"))
                .collect::<String>(),
        )
    }
}

/// The last [`TAIL_LINES`] lines of `text`, indented.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    lines[start..]
        .iter()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `command` as a shell line: arguments with characters a shell would read quoted in `'…'`.
fn shell_words(command: &Command) -> String {
    let quote = |word: &std::ffi::OsStr| {
        let word = word.to_string_lossy();
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
        if plain {
            word.into_owned()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}
