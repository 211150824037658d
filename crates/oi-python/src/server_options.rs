//! The options `AsyncInterpreter.server.run()` takes, named as oi-server's flags, and (with
//! the feature `server`) their application to the server's configuration and the sessions'
//! settings.

/// The options `run()` takes, named as oi-server's flags (dashes as underscores).
pub const OPTIONS: [&str; 18] = [
    "allow_network_auto_run",
    "allow_network_credentials",
    "sandbox",
    "deny_network",
    "sandbox_fallback",
    "pass_env",
    "max_processes",
    "max_memory",
    "max_cpu_seconds",
    "queue",
    "max_sessions",
    "session_idle_timeout",
    "allowed_host",
    "insecure_no_key",
    "max_connections",
    "header_timeout",
    "max_message_bytes",
    "max_pending_bytes",
];

#[cfg(feature = "server")]
pub use serving::apply;

/// Applying the options (feature `server`: it needs oi-server's configuration).
#[cfg(feature = "server")]
mod serving {
    use std::time::Duration;

    use oi_core::Settings;
    use oi_server::{InterruptMode, ServerConfig};
    use pyo3::exceptions::{PyTypeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyString};

    use super::OPTIONS;
    use crate::convert;

    /// Reads option `name` as `T`, saying what it must be.
    fn option<'py, T: FromPyObjectOwned<'py>>(
        value: &Bound<'py, PyAny>,
        name: &str,
        what: &str,
    ) -> PyResult<T> {
        value.extract::<T>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{name} must be {what}, not {} ({})",
                convert::type_name(value),
                convert::short_repr(value)
            ))
        })
    }

    /// A string, or a list of strings (repeatable flags).
    fn strings(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(vec![text.extract::<String>()?]);
        }
        option(value, name, "a string or a list of strings")
    }

    /// Applies oi-server's flags, given as keyword options, to `config` (the sandbox and limit
    /// options to the sessions' `settings`).
    pub fn apply(
        config: &mut ServerConfig,
        settings: &mut Settings,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let computer = &mut settings.computer;
        for (key, value) in options.iter() {
            let key: String = key.extract()?;
            let name = key.as_str();
            match name {
                "allow_network_auto_run" => {
                    config.allow_network_auto_run = option(&value, name, "True or False")?;
                }
                "allow_network_credentials" => {
                    config.allow_network_credentials = option(&value, name, "True or False")?;
                }
                "sandbox" => {
                    let mode: String =
                        option(&value, name, "\"off\", \"workspace\" or \"readonly\"")?;
                    computer.sandbox.mode = mode.parse().map_err(|_| {
                        PyValueError::new_err(format!(
                            "sandbox must be \"off\", \"workspace\" or \"readonly\", not {mode:?}"
                        ))
                    })?;
                }
                "deny_network" => {
                    if option::<bool>(&value, name, "True or False")? {
                        computer.sandbox.network = false;
                    }
                }
                "sandbox_fallback" => {
                    computer.sandbox.allow_unsandboxed_fallback =
                        option(&value, name, "True or False")?;
                }
                "pass_env" => {
                    for variable in strings(&value, name)? {
                        computer.sandbox = computer.sandbox.clone().with_pass_env(variable);
                    }
                }
                "max_processes" => {
                    computer.limits.max_processes = Some(option(&value, name, "a whole number")?);
                }
                "max_memory" => {
                    computer.limits.max_memory_bytes =
                        Some(option(&value, name, "a number of bytes")?);
                }
                "max_cpu_seconds" => {
                    computer.limits.max_cpu_seconds = Some(option(&value, name, "a whole number")?);
                }
                "queue" => {
                    if option::<bool>(&value, name, "True or False")? {
                        config.interrupt_mode = InterruptMode::Queue;
                    }
                }
                "max_sessions" => config.max_sessions = option(&value, name, "a whole number")?,
                "session_idle_timeout" => {
                    let secs: u64 = option(&value, name, "a number of seconds")?;
                    config.session_idle_timeout = Duration::from_secs(secs);
                }
                "allowed_host" => config.allowed_hosts.extend(strings(&value, name)?),
                "insecure_no_key" => {
                    config.insecure_no_key = option(&value, name, "True or False")?
                }
                "max_connections" => {
                    config.max_connections = option(&value, name, "a whole number")?
                }
                "header_timeout" => {
                    let secs: u64 = option(&value, name, "a number of seconds")?;
                    config.header_read_timeout = Duration::from_secs(secs);
                }
                "max_message_bytes" => config.max_frame_bytes = option(&value, name, "a number")?,
                "max_pending_bytes" => config.max_pending_bytes = option(&value, name, "a number")?,
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "run() got an unknown option {other:?}: the options are {}",
                        OPTIONS.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}
