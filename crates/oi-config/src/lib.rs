//! # oi-config
//!
//! Settings from every layer — Open Interpreter's defaults, a profile, the environment, flags —
//! laid over one another with one patch type ([`oi_core::settings::SettingsPatch`]), and the
//! interpreter built from them. `oi`, `oi-server` and the Python API all use it, so a profile,
//! a flag or a setting means the same thing everywhere. Not for: the server's own
//! configuration (host, port, keys), which stays in oi-server.
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
pub mod flags;
pub mod layers;
pub mod logging;
pub mod profiles;
pub mod spelling;

pub use assemble::{Assembly, ComputerParts, build_interpreter};
pub use flags::SettingsArgs;
pub use layers::Layers;
pub use profiles::{Profile, ProfileError, ProfileNote};
pub use spelling::normalize;
