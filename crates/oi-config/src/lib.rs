//! # oi-config
//!
//! Settings from every layer — Open Interpreter's defaults, a profile, the environment, flags —
//! laid over one another with one patch type ([`oi_core::settings::SettingsPatch`]), and the
//! interpreter built from them. `oi`, `oi-server` and the Python API all use it, so a profile,
//! a flag or a setting means the same thing everywhere. Not for: the server's own
//! configuration (host, port, keys), which stays in oi-server.
//!
//! Every interpreter is built here, through one door ([`Assembly`], and [`lazy`] for the
//! Python API): the computer, the computer API's link, what the program offers beside it (MCP
//! servers' tools), the judge, and a server's key binding. The feature `cli` (on for `oi` and
//! `oi-server`, off for the Python extension) adds the settings flags (`flags`, clap) and
//! sets the log up with tracing-subscriber ([`logging`]).
//!
//! ```no_run
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     settings: oi_config::SettingsArgs,
//! }
//!
//! # fn main() -> Result<(), oi_config::ProfileError> {
//! let cli = Cli::parse_from(oi_config::normalize(std::env::args()));
//! let layers = oi_config::Layers::from_args(&cli.settings)?;
//! let interpreter = oi_config::build_interpreter(layers.settings());
//! # let _ = interpreter; Ok(()) }
//! ```

pub mod assemble;
pub mod environment;
#[cfg(feature = "cli")]
pub mod flags;
pub mod layers;
pub mod lazy;
#[cfg(not(feature = "cli"))]
mod log_plain;
pub mod logging;
pub mod profiles;
pub mod spelling;

pub use assemble::{Assembly, ComputerParts, Offer, build_interpreter, judge};
#[cfg(feature = "cli")]
pub use flags::SettingsArgs;
pub use layers::Layers;
pub use profiles::{Profile, ProfileError, ProfileNote};
pub use spelling::normalize;
