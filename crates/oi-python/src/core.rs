//! `Core`: one interpreter (settings, conversation, model, computer) behind a Python object.
//! The pure-Python `OpenInterpreter` keeps one and forwards its attributes, turns and
//! `computer.run()` here.

use std::sync::Arc;

use futures::StreamExt;
use oi_core::runtime::CONVERSATION_FILENAME;
use oi_core::{ChatInput, Interpreter, Message, Output};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

use crate::async_core::AsyncCore;
use crate::convert;
use crate::live_computer::LiveComputer;
use crate::runtime::{self, LazyRuntime};
use crate::server::ServerHandle;
use crate::settings;
use crate::turn::TurnHandle;
use crate::wiring;

/// An interpreter: settings with Open Interpreter's defaults, an empty conversation, the model
/// provider and the local computer (both made on first use), and a runtime (started on first
/// use).
#[pyclass(frozen, module = "interpreter._oi")]
pub struct Core {
    interpreter: Interpreter,
    computer: Arc<LiveComputer>,
    runtime: Arc<LazyRuntime>,
}

/// Reads a list of message dicts (JSON values), naming the first bad one.
pub fn parse_messages(values: Vec<Value>, what: &str) -> PyResult<Vec<Message>> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| parse_message(value, &format!("{what}[{i}]")))
        .collect()
}

/// Reads one message dict; `role` defaults to `user` only where the caller added it.
fn parse_message(value: Value, what: &str) -> PyResult<Message> {
    if !value.is_object() {
        return Err(PyTypeError::new_err(format!(
            "{what} is {value}, not a message: a message is a dict like {{\"role\": \"user\", \"type\": \"message\", \"content\": \"hi\"}}"
        )));
    }
    let message: Message = serde_json::from_value(value).map_err(|e| {
        PyValueError::new_err(format!(
            "{what} is not a valid LMC message: {e} (keys: role, type, format, content, recipient; e.g. {{\"role\": \"user\", \"type\": \"message\", \"content\": \"hi\"}})"
        ))
    })?;
    read_image_path(message, what)
}

/// A user's image given by its path (format `path`) as the image itself, read now: oi sends
/// what it read when the library's user gave it, never a file named in history later.
fn read_image_path(message: Message, what: &str) -> PyResult<Message> {
    let is_path_image = message.role == oi_core::Role::User
        && message.kind == oi_core::Kind::Image
        && message.format.as_deref() == Some("path");
    if !is_path_image {
        return Ok(message);
    }
    let path = std::path::PathBuf::from(message.text().trim());
    oi_llm::images::image_from_file(&path).map_err(|why| {
        PyValueError::new_err(format!(
            "{what}: the image at {} could not be read: {why}",
            path.display()
        ))
    })
}

/// A Python `chat()` argument as core input.
fn chat_input(message: &Bound<'_, PyAny>) -> PyResult<ChatInput> {
    if let Ok(text) = message.cast::<PyString>() {
        return Ok(ChatInput::Text(text.extract::<String>()?));
    }
    if message.is_instance_of::<PyDict>() {
        let mut value = convert::to_json(message, "the message")?;
        if let Some(object) = value.as_object_mut() {
            object
                .entry("role")
                .or_insert_with(|| Value::String("user".to_owned()));
        }
        return Ok(ChatInput::Message(parse_message(value, "the message")?));
    }
    if message.is_instance_of::<PyList>() {
        let Value::Array(values) = convert::to_json(message, "messages")? else {
            return Err(PyTypeError::new_err("messages must be a list"));
        };
        return Ok(ChatInput::Messages(parse_messages(values, "messages")?));
    }
    Err(PyTypeError::new_err(format!(
        "chat() takes a string, a message dict or a list of message dicts, not {} ({})",
        convert::type_name(message),
        convert::short_repr(message)
    )))
}

impl Core {
    /// The runtime, started if needed.
    fn rt(&self) -> PyResult<&tokio::runtime::Runtime> {
        self.runtime.get()
    }

    /// Builds the computer now, with the settings as they are (the model key it withholds).
    fn prepare(&self) {
        let settings = self.interpreter.settings();
        // `verbose`/`debug` turn on oi's log on standard error, as `oi -v`/`--debug` do
        // (from the first turn that has them; the log stays on for the process).
        oi_config::logging::init(settings.verbose, settings.debug);
        self.computer.prepare(&settings);
    }
}

#[pymethods]
impl Core {
    /// A new interpreter; `workers` is the number of runtime threads (more for a server).
    #[new]
    #[pyo3(signature = (workers = 1))]
    fn new(workers: usize) -> Self {
        let (interpreter, computer) = wiring::interpreter(oi_core::Settings::default());
        Core {
            interpreter,
            computer,
            runtime: Arc::new(LazyRuntime::new(workers.clamp(1, 16))),
        }
    }

    /// The setting `name` (`auto_run`, `llm.model`, …).
    fn get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let value = if name == CONVERSATION_FILENAME {
            settings::get_filename(&self.interpreter.runtime())
        } else {
            settings::get(&self.interpreter.settings(), name)
                .ok_or_else(|| PyKeyError::new_err(name.to_owned()))?
        };
        convert::to_python(py, &value)
    }

    /// Sets the setting `name`; a wrong value raises `ValueError` and changes nothing.
    fn set(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = convert::to_json(value, name)?;
        if name == CONVERSATION_FILENAME {
            let mut runtime = self.interpreter.runtime_mut();
            return settings::set_filename(&mut runtime, value).map_err(PyValueError::new_err);
        }
        let mut current = self.interpreter.settings_mut();
        settings::set(&mut current, name, value).map_err(PyValueError::new_err)
    }

    /// The conversation as JSON (a list of LMC messages).
    fn messages_json(&self) -> String {
        serde_json::to_string(&*self.interpreter.messages_mut()).unwrap_or_else(|_| "[]".into())
    }

    /// Replaces the conversation with the JSON list `json`; a bad message raises and changes
    /// nothing.
    fn set_messages_json(&self, json: &str) -> PyResult<()> {
        let values: Vec<Value> = serde_json::from_str(json)
            .map_err(|e| PyValueError::new_err(format!("messages must be a list of dicts: {e}")))?;
        let messages = parse_messages(values, "messages")?;
        self.interpreter.set_messages(messages);
        Ok(())
    }

    /// Adds `message` (a string, a message dict — `role` defaults to `user` — or a list of
    /// message dicts, which replaces the conversation) and starts a turn.
    fn chat(&self, message: &Bound<'_, PyAny>) -> PyResult<TurnHandle> {
        let input = chat_input(message)?;
        self.prepare();
        Ok(TurnHandle::new(
            self.interpreter.chat(input),
            self.runtime.clone(),
        ))
    }

    /// Starts a turn on the conversation as it is, saved afterwards like any `chat()` (for
    /// `chat(list)`, once the list is the conversation).
    fn respond_saving(&self) -> TurnHandle {
        self.prepare();
        TurnHandle::new(
            self.interpreter.chat(ChatInput::Append(Vec::new())),
            self.runtime.clone(),
        )
    }

    /// Python is exiting: no callback into Python from now on, every code session ended
    /// (waiting at most a second).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.runtime.close();
        let Some(rt) = self.runtime.started() else {
            return Ok(());
        };
        let terminate = self.interpreter.computer().terminate();
        runtime::wait(py, rt, async move {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), terminate).await;
        })
    }

    /// Starts a turn on the conversation as it is (not saved afterwards).
    fn respond(&self) -> TurnHandle {
        self.prepare();
        TurnHandle::new(self.interpreter.respond(), self.runtime.clone())
    }

    /// Ends every language session and clears the conversation (settings stay).
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let rt = self.rt()?;
        runtime::wait(py, rt, self.interpreter.reset())
    }

    /// Ends every language session (and every process they started).
    fn terminate(&self, py: Python<'_>) -> PyResult<()> {
        let rt = self.rt()?;
        runtime::wait(py, rt, self.interpreter.computer().terminate())
    }

    /// Interrupts whatever code is running; the sessions stay.
    fn stop_code(&self) {
        self.interpreter.computer().stop();
    }

    /// Runs `code` in the persistent session of `language` and returns its output, merged as
    /// the original's `computer.run()` does. CTRL-C stops the code and raises.
    fn run<'py>(
        &self,
        py: Python<'py>,
        language: &str,
        code: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        self.prepare();
        let rt = self.rt()?;
        let policy = self.interpreter.settings().run_policy(language);
        let stream = self.interpreter.computer().run(language, code, &policy);
        let outputs: Vec<Output> = runtime::wait(py, rt, stream.collect())?;
        let list = PyList::empty(py);
        for output in oi_computer::merge_outputs(outputs) {
            list.append(convert::output_object(py, output)?)?;
        }
        Ok(list)
    }

    /// A computer API call that needs oi (`ai.chat`, `ai.query`, `ai.summarize`): the
    /// configured model asked through oi's core, the spend counted. A failure raises
    /// `RuntimeError` with oi's sentence.
    #[pyo3(signature = (op, text, query = String::new()))]
    fn computer_api(
        &self,
        py: Python<'_>,
        op: &str,
        text: String,
        query: String,
    ) -> PyResult<String> {
        let rt = self.rt()?;
        let request = oi_core::computer_api::ApiRequest {
            op: op.to_owned(),
            text,
            query,
            code: String::new(),
        };
        let answer = runtime::wait(py, rt, self.interpreter.computer_api(request))?;
        answer.map_err(pyo3::exceptions::PyRuntimeError::new_err)
    }

    /// What this interpreter's model requests have cost so far, in USD (kept across
    /// `reset()`): the usage the provider reports, priced from oi's model table.
    fn spent(&self) -> f64 {
        self.interpreter.spent()
    }

    /// Starts running `code` in `language` and returns its outputs as they come.
    fn run_stream(&self, language: &str, code: &str) -> crate::run_stream::RunStream {
        self.prepare();
        let policy = self.interpreter.settings().run_policy(language);
        let stream = self.interpreter.computer().run(language, code, &policy);
        crate::run_stream::RunStream::new(stream, self.runtime.clone())
    }

    /// The languages offered to the model: `(name, aliases)` pairs.
    fn languages(&self) -> Vec<(String, Vec<String>)> {
        use oi_core::Computer as _;
        self.computer
            .languages()
            .into_iter()
            .map(|spec| (spec.name, spec.aliases))
            .collect()
    }

    /// Every language oi can run: `(name, aliases)` pairs.
    #[staticmethod]
    fn all_languages() -> Vec<(String, Vec<String>)> {
        LiveComputer::all_languages()
            .into_iter()
            .map(|spec| (spec.name, spec.aliases))
            .collect()
    }

    /// Makes these the custom languages: `(name, aliases, adapter)` triples, the adapter
    /// having `run(code)`, `stop()` and `terminate()`. One named like a built-in replaces it.
    fn set_custom_languages(&self, languages: Vec<(String, Vec<String>, Py<PyAny>)>) {
        let languages = languages
            .into_iter()
            .map(
                |(name, aliases, object)| crate::custom_language::CustomLanguage {
                    spec: oi_core::LanguageSpec { name, aliases },
                    object,
                },
            )
            .collect();
        self.computer.set_custom(languages);
    }

    /// Offers only these languages (names or aliases); `None` offers all of them.
    #[pyo3(signature = (names = None))]
    fn restrict_languages(&self, names: Option<Vec<String>>) -> PyResult<()> {
        self.computer.restrict(names).map_err(|unknown| {
            let known: Vec<String> = LiveComputer::all_languages()
                .into_iter()
                .map(|spec| spec.name)
                .collect();
            PyValueError::new_err(format!(
                "oi cannot run {}: the languages are {} (or a custom language object with `name` and `run`)",
                unknown.join(", "),
                known.join(", ")
            ))
        })
    }

    /// Connects the MCP servers of `servers` (JSON: a name to `{command, args, env}` or
    /// `{url, headers}`, as a profile's `mcp_servers:`), replacing the previous ones, and
    /// offers their tools to the model; one line for each that could not be used.
    fn connect_mcp_servers(&self, py: Python<'_>, servers: &str) -> PyResult<Vec<String>> {
        let value: serde_json::Value = serde_json::from_str(servers)
            .map_err(|e| PyValueError::new_err(format!("mcp_servers: {e}")))?;
        let specs = oi_mcp::client::servers_from(Some(&value)).map_err(PyValueError::new_err)?;
        let rt = self.rt()?;
        let clients = runtime::wait(py, rt, oi_mcp::client::McpClients::connect(&specs))?;
        let failures = clients.failures().to_vec();
        let offered = (!specs.is_empty()).then(|| Arc::new(clients));
        if let Some(previous) = self.computer.set_mcp(offered)
            && let Some(previous) = Arc::into_inner(previous)
        {
            runtime::wait(py, rt, previous.close())?;
        }
        Ok(failures)
    }

    /// The chunk-in, chunk-out face of this interpreter (same conversation).
    fn async_core(&self) -> AsyncCore {
        AsyncCore::new(
            self.interpreter.clone(),
            self.computer.clone(),
            self.runtime.clone(),
        )
    }

    /// Starts oi's server in this process with the settings as they are now (each session
    /// gets its own interpreter with them): `host`/`port`, and `options` named as oi-server's
    /// flags (`sandbox`, `deny_network`, `queue`, …). Returns once the port accepts
    /// connections, or raises when the server cannot start.
    fn serve(
        &self,
        py: Python<'_>,
        host: String,
        port: u16,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<ServerHandle> {
        let rt = self.rt()?;
        ServerHandle::start(
            py,
            rt,
            self.runtime.clone(),
            self.interpreter.settings(),
            host,
            port,
            options,
        )
    }
}
